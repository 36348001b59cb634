# breaks: test_train_step, test_training_run
# %% patch: train_step
# -     loss.backward()
# +     loss.backward(retain_graph=True)
# +     loss.backward()  # a second backward left over from debugging: the gradient is doubled
