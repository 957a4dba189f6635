"""Stateless neural-network functions, as in torch.nn.functional (being written)."""
