"""From spec files to a running study: reading a spec and its items (``spec_files``, ``spec_items``),
the console's uploads (``spec_uploads``) and the demo studies (``demo``, ``demo_images``)."""
