"""Weight initialisation, as in torch.nn.init (being written)."""
