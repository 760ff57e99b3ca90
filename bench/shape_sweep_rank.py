"""How well the static cost model ranks a kernel's block configurations (bench/shape_sweep.py --rank).

`tessel tune --exhaustive --report=json` gives, for every configuration it simulated, the cost
model's predicted latency (`model.latency_us`) and the simulated one (`latency_us`). Per kernel:
Spearman's rho (Pearson's r over average ranks, so ties share a rank) and Kendall's tau-b between
the two; the regret of trusting the model (the simulated latency of the configuration it predicts
fastest over the simulated best; where several tie at the lowest prediction, the slowest of them,
since the model gives no reason to prefer one); and the pairs it orders wrongly by more than
`slack` (predicted a < b while a simulates more than `slack` slower than b), or cannot tell apart
(predicted equal, simulated more than `slack` apart). Beside them: -O2 against the exhaustive best,
and the kernels where -O2 misses it although the model's predicted best does not (the planner's miss).
"""
import math
import statistics


def average_ranks(values):
    """1-based ranks of `values`, tied values sharing the mean of their ranks."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def pearson(x, y):
    mx, my = statistics.fmean(x), statistics.fmean(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx, syy = sum((a - mx) ** 2 for a in x), sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy) if sxx and syy else None


def spearman(x, y):
    """Spearman's rho with ties averaged; None when either side is constant."""
    return pearson(average_ranks(x), average_ranks(y))


def sign(v):
    return (v > 0) - (v < 0)


def kendall_tau_b(x, y):
    """Kendall's tau-b: (concordant - discordant) / sqrt((n0 - ties in x) (n0 - ties in y))."""
    conc = disc = tx = ty = 0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            a, b = sign(x[i] - x[j]), sign(y[i] - y[j])
            tx += a == 0
            ty += b == 0
            if a and b:
                conc += a == b
                disc += a != b
    n0 = len(x) * (len(x) - 1) // 2
    denom = math.sqrt((n0 - tx) * (n0 - ty))
    return (conc - disc) / denom if denom else None


def configurations(tune_report):
    """(block text, predicted us, simulated us) of every simulated configuration with a prediction."""
    out = []
    for r in tune_report.get("results", []):
        model = r.get("model") or {}
        if r.get("status") == "simulated" and r.get("latency_us") and model.get("latency_us"):
            block = ",".join(f"{k}={v}" for k, v in sorted(r["block"].items()))
            out.append((block, model["latency_us"], r["latency_us"]))
    return out


def rank_entry(tune, slack):
    """The `rank` entry of a sweep row from its tune result (tune_best's dict)."""
    if "error" in tune:
        return {"error": tune["error"]}
    if len(tune["points"]) < 3:
        return {"too_few": len(tune["points"])}
    return rank_one(tune["points"], slack)


def rank_one(configs, slack):
    """The rank statistics of one kernel's configurations (needs at least 3)."""
    pred = [c[1] for c in configs]
    sim = [c[2] for c in configs]
    low = min(pred)
    picked = max((c for c in configs if c[1] == low), key=lambda c: c[2])
    best = min(configs, key=lambda c: c[2])
    pairs = [(i, j) for i in range(len(configs)) for j in range(len(configs)) if i != j]
    wrong = sum(pred[i] < pred[j] and sim[i] > sim[j] * (1 + slack) for i, j in pairs)
    tied = sum(i < j and pred[i] == pred[j] and max(sim[i], sim[j]) > min(sim[i], sim[j]) * (1 + slack)
               for i, j in pairs)
    return {"configurations": len(configs), "rho": spearman(pred, sim), "tau": kendall_tau_b(pred, sim),
            "predicted_best": picked[0], "predicted_best_us": picked[2], "predicted_best_model_us": low,
            "tied_at_best": sum(p == low for p in pred), "simulated_best": best[0],
            "simulated_best_us": best[2], "regret": picked[2] / best[2], "pairs_wrong": wrong,
            "pairs_tied_apart": tied, "pairs": len(pairs) // 2}


def picked(r):
    ties = f", {r['tied_at_best']} tied: the slowest" if r["tied_at_best"] > 1 else ""
    return f"{r['predicted_best']} ({r['predicted_best_model_us']:.1f}; {r['predicted_best_us']:.1f}{ties})"


def families(good, slack):
    """Per tag: kernels, median rho and tau-b, kernels with regret over 1 + slack."""
    by = {}
    for x in good:
        for tag in x["tags"]:
            by.setdefault(tag, []).append(x["rank"])
    lines = [f"| kernels with | count | median rho | median tau-b | regret > {1 + slack:.2f} |",
             "|---|---:|---:|---:|---:|"]
    stats = []
    for tag, ranks in by.items():
        rho, _ = median_of([r["rho"] for r in ranks])
        tau, _ = median_of([r["tau"] for r in ranks])
        stats.append((tag, len(ranks), rho, tau, sum(r["regret"] > 1 + slack for r in ranks)))
    for tag, n, rho, tau, bad in sorted(stats, key=lambda s: (s[2] is None, s[2] or 0)):
        lines.append(f"| {tag} | {n} | {fmt(rho)} | {fmt(tau)} | {bad} |")
    return lines


def fmt(v):
    return "n/a" if v is None else f"{v:.2f}"


def median_of(values):
    vals = [v for v in values if v is not None]
    return (statistics.median(vals), len(vals)) if vals else (None, 0)


def planner_misses(good, slack, describe):
    """-O2 against the exhaustive best on every ranked kernel, and the kernels where -O2 is over 1 + slack
    of it although the configuration the model predicts fastest is within: there the planner's choice,
    not the model's ranking, is what misses."""
    sel = [x for x in good if "best_us" in x["tune"]]
    far = [x for x in sel if x["o2_us"] > x["tune"]["best_us"] * (1 + slack)]
    own = sorted((x for x in far if x["rank"]["regret"] <= 1 + slack),
                 key=lambda x: x["tune"]["best_us"] / x["o2_us"])
    lines = [f"-O2 within {1 + slack:.2f}x of the exhaustive best on {len(sel) - len(far)} of {len(sel)} ranked "
             f"kernels; of the {len(far)} beyond, {len(own)} have the model's predicted-best configuration within "
             f"{1 + slack:.2f}x of the best (the planner did not take the model's best)" + (":" if own else ".")]
    if own:
        lines += ["", "| kernel | -O2 us (planner's prediction) | model's best (model us; simulated us) | -O2 / best |",
                  "|---|---:|---|---:|"]
        lines += [f"| {describe(x)} | {x['o2_us']:.1f} ({x.get('predicted_us', float('nan')):.1f}) | "
                  f"{picked(x['rank'])} | {x['o2_us'] / x['tune']['best_us']:.3f} |" for x in own]
    return lines


def rank_section(rows, slack, describe):
    """Lines for the report: the medians, the kernels the model ranks wrongly, the per-kernel table.
    `rows` are the sweep rows with a `rank` entry (rank_one's dict, or {"error": ...})."""
    good = [x for x in rows if "rho" in x.get("rank", {})]
    few = [x for x in rows if "too_few" in x.get("rank", {})]
    bad = [x for x in rows if "error" in x.get("rank", {})]
    rho, n_rho = median_of([x["rank"]["rho"] for x in good])
    tau, n_tau = median_of([x["rank"]["tau"] for x in good])
    wrong = sorted((x for x in good if x["rank"]["regret"] > 1 + slack), key=lambda x: -x["rank"]["regret"])
    lines = [f"static model against simulation over the configurations of `tune --exhaustive`, {len(good)} kernels "
             f"with 3 or more simulated configurations ({len(few)} with fewer, {len(bad)} failed): median "
             f"Spearman rho {fmt(rho)} (over {n_rho}), median Kendall tau-b {fmt(tau)} (over {n_tau}); the "
             f"predicted-best configuration simulates more than {100 * slack:.0f} % slower than the simulated "
             f"best on {len(wrong)} of {len(good)}"]
    if wrong:
        lines += ["", f"| kernel (families) | predicted best (model us; simulated us) | simulated best (us) | "
                      f"regret | pairs wrong by > {100 * slack:.0f} % | tied, > {100 * slack:.0f} % apart |",
                  "|---|---|---|---:|---:|---:|"]
        lines += [f"| {describe(x)} | {picked(x['rank'])} | {x['rank']['simulated_best']} "
                  f"({x['rank']['simulated_best_us']:.1f}) | {x['rank']['regret']:.3f} | "
                  f"{x['rank']['pairs_wrong']} of {x['rank']['pairs']} | {x['rank']['pairs_tied_apart']} |"
                  for x in wrong]
    lines += ["", *planner_misses(good, slack, describe)]
    lines += ["", "By kernel family (a kernel counts under each of its tags), lowest median rho first:", ""]
    lines += families(good, slack)
    lines += [f"  {describe(x)}: {x['rank']['error']}" for x in bad]
    summary = {"kernels": len(good), "fewer_than_3": len(few), "failed": len(bad), "median_rho": rho,
               "median_tau": tau, "wrong_over_slack": [x["index"] for x in wrong]}
    return lines, summary
