"""Names for the array-like data the public functions take, used in their signatures.

A column may be given as a list (or tuple) or a numpy array; functions of modules that read
tables take a pandas Series as well (``Texts | pd.Series``).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

#: labels, synset names or image names
Texts = Sequence[str] | np.ndarray
#: any hashable ids (image names or numbers)
Ids = Sequence[Hashable] | np.ndarray
#: numbers (scores, similarities)
Numbers = Sequence[float] | np.ndarray
#: (n, 4) boxes as corners ``x1, y1, x2, y2``
Boxes = Sequence[Sequence[float]] | np.ndarray
