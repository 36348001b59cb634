# By-hand counts written as exact integer arithmetic between numbers (within the bounds on typed arithmetic).
# %% cell: memory_by_hand
weight_bytes = ({answer} * 3) // 3
# %% cell: flops_by_hand
flops = 2 * {answer} - {answer}
