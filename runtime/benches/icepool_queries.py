# The four benchmark queries in icepool (the Python dice-probability package, from PyPI), for
# runtime/benches/compare_icepool.sh. Modes: cold (compute once), show (print the
# distribution), N [ROUNDS] (time N warm computations, best of ROUNDS rounds).
import sys, time
t0 = time.perf_counter()
import icepool
t_import = time.perf_counter() - t0

def opposed():
    diff = (icepool.d10 + 4) - icepool.d10
    return diff.map(lambda x: 'miss' if x <= 0 else ('pinned_down' if x <= 4 else 'eliminated'))

def hit_save():
    hits = 12 @ (icepool.d6 >= 4)
    return hits @ (icepool.d6 <= 4)

def sum100():
    return 100 @ icepool.d6

def highest3():
    return icepool.d6.pool(10).highest(3).sum()

Q = {'opposed_d10': opposed, 'hit_save_pool': hit_save, 'sum_100d6': sum100, 'highest_3_of_10d6': highest3}

if __name__ == '__main__':
    name = sys.argv[1]
    mode = sys.argv[2] if len(sys.argv) > 2 else 'cold'
    f = Q[name]
    if mode == 'cold':
        d = f()
        _ = [d.probability(k) for k in d.outcomes()]
    elif mode == 'show':
        d = f()
        for k in d.outcomes():
            # A pool of one die counts as the die itself: its outcomes are True/False (1/0).
            print(int(k) if isinstance(k, bool) else k, d.probability(k))
    else:
        # N [ROUNDS]: the best of ROUNDS rounds (default 1) of N warm computations.
        n = int(mode)
        rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 1
        f()  # first call outside the timing (warm)
        best = float('inf')
        for _ in range(rounds):
            t = time.perf_counter()
            for _ in range(n):
                d = f()
                _ = [d.probability(k) for k in d.outcomes()]
            best = min(best, (time.perf_counter() - t) / n)
        print(f"{name}: {best*1e6:.1f} us per computation (warm, best of {rounds} round(s) of {n}); import {t_import*1e3:.0f} ms")
