"""WordNet, synset matching and labelled similarity matrices (with the WordNet baseline).

The WordNet look-ups answer as NLTK's reader does, from a prebuilt index (``build_index`` makes
it; ``index_path`` is where it lives)."""

from metrics._lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    **dict.fromkeys(("SimilarityMatrix", "combine"), "_similarity"),
    **dict.fromkeys(("default_path", "load_default"), "_baseline"),
    **dict.fromkeys(("excluded_reason", "excluded_senses", "offensive_words"), "_offensive"),
    **dict.fromkeys(("candidate_synsets", "match_synset", "match_synsets", "resolve"), "_matching"),
    **dict.fromkeys(("WordNetIndex", "build_index", "data_dir", "gloss", "hypernyms", "hyponyms", "index_path",
                     "is_synset_name", "lch_similarity", "lemma_candidates", "lemma_names", "lemmatize",
                     "path_similarity", "pos_of", "synsets", "wup_similarity"), "_wordnet"),
})
