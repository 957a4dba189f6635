"""Optimizers, as in torch.optim (being written)."""
