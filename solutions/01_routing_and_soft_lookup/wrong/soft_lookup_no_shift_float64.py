# breaks: test_soft_lookup
# mistake: softmax_no_max_shift
# exp() of the raw scores in float64: overflows later (above about 709) but still overflows.
# %% cell: soft_lookup
def soft_lookup(query, keys, values, temperature=1.0):
    """float64, no shift."""
    s = apply_temperature(query.double() @ keys.double().transpose(-2, -1), temperature)
    e = s.exp()
    w = e / e.sum(-1, keepdim=True)
    return (w @ values.double()).float(), w.float()
