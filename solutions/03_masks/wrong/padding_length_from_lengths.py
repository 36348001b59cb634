# breaks: test_padding_mask
# mistake: padding_width_from_lengths
# S taken from the longest sequence instead of the argument: too narrow when every sequence is padded.
# %% patch: padding_mask
# - positions = torch.arange(S, device=lengths.device)  # (S,)
# + positions = torch.arange(int(lengths.max()))
