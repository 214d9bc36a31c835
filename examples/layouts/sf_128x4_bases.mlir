// the CUTLASS 128 x 4 scale-factor tile as Triton offset bases over (row, kb)
#ttg.shared_linear<{offset = [[0, 1], [0, 2], [32, 0], [64, 0], [1, 0], [2, 0], [4, 0], [8, 0], [16, 0]]}>
