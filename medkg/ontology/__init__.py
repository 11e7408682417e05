"""The vocabulary layer (E3): loaders, concept index and exports."""
