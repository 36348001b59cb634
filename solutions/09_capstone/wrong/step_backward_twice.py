# breaks: test_train_step
# %% patch: train_step
# -     loss.backward()
# +     loss.backward(retain_graph=True)
# +     loss.backward()  # a second backward left over from debugging: the gradient is doubled
