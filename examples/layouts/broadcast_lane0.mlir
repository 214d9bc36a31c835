#ttg.linear<{register = [[0, 1], [4, 0]], lane = [[0, 0], [0, 2], [0, 4], [1, 0], [2, 0]], warp = [], block = []}>
