# breaks: test_train_step, test_training_run
# %% patch: train_step
# -     loss.backward()
# +     (loss / x.shape[0]).backward()  # "average over the batch" again: the loss is already a mean
