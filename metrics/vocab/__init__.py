"""WordNet, synset matching and labelled similarity matrices (with the WordNet baseline)."""
