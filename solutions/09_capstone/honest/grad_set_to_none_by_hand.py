# train_step clearing each parameter's gradient by hand.
# %% patch: train_step
# - optimizer.zero_grad(set_to_none=True)  # gradients of the previous step must not leak into this one
# + for p in model.parameters():
# +     p.grad = None
