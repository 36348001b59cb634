# top_p_filter row by row with a Python loop over the sorted tokens.
# %% cell: top_p_filter
def top_p_filter(logits, p):
    """Loop over rows and tokens."""
    out = logits.clone()
    flat, rows = out.reshape(-1, out.shape[-1]), logits.reshape(-1, logits.shape[-1])
    for r in range(rows.shape[0]):
        probs = torch.softmax(rows[r], dim=-1)
        order = torch.argsort(rows[r], descending=True)
        total = 0.0
        for j in order.tolist():
            if total >= p:
                flat[r, j] = float("-inf")
            total += float(probs[j])
    return out
