"""HICO-DET: its vocabulary (117 verbs, 80 objects, 600 HOI classes) and the official evaluation."""
