# breaks: test_tiny_gpt
# mistake: loss_summed
# %% patch: tiny_gpt
# - loss = None if targets is None else F.cross_entropy(logits.reshape(B * L, -1), targets.reshape(B * L))
# + loss = None if targets is None else F.cross_entropy(logits.reshape(B * L, -1), targets.reshape(B * L), reduction="sum")
