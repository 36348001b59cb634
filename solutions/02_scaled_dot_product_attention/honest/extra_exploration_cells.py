# Cells the student added for exploration (prints, a plot import, a magic) around ordinary answers.
# %% added
%matplotlib inline
import matplotlib.pyplot as plt
x = torch.randn(3, 4)
print(x.shape)
# %% cell: softmax
def softmax(x, dim=-1):
    """Stable softmax."""
    z = x - torch.amax(x, dim=dim, keepdim=True)
    return torch.exp(z) / torch.exp(z).sum(dim=dim, keepdim=True)
# %% added
print(softmax(torch.tensor([1.0, 2.0, 3.0])))
plt.plot([1, 2, 3])
