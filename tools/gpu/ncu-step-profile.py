#!/usr/bin/env python3
"""Where a consumer step's time goes, from ncu's per-instruction stall samples (no GPU needed).

Reads the SASS source-counter CSV that tools/gpu/ncu-ws-kernel.sh writes ($OUT/ncu_<mode>_sass.csv),
splits the kernel into the consumer warpgroups' code (from their setmaxnreg.inc to the producer's
setmaxnreg.dec) and the producer's, prints each side's stall reasons, and then walks the consumer's
hot instructions (executed at least --hot times: the main loop of a long sequence) in address order,
in chunks of --chunk instructions, with each chunk's samples, its three largest stall reasons and its
opcodes. A chunk's samples over the samples of an issue ("selected") give cycles, so the chunks of
one step add up to where its cycles go: issue and waits, the row maximum, the codes, their packing,
O's rescale.
Usage: ncu-step-profile.py CSV [--hot N] [--chunk N]
"""
import argparse
import collections
import csv


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def opcode(source):
    words = source.split()
    op = words[1] if words and words[0].startswith("@") and len(words) > 1 else (words[0] if words else "")
    return op.split(".")[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--hot", type=float, default=0.9e6, help="executions that make an instruction hot")
    ap.add_argument("--chunk", type=int, default=24)
    args = ap.parse_args()
    rows = list(csv.reader(open(args.csv)))
    head = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    columns = {name: j for j, name in enumerate(rows[head])}
    reasons = [c for c in rows[head] if c.startswith("stall_") and "Not Issued" not in c]
    data = [r for r in rows[head + 1:] if len(r) == len(rows[head])]
    base = int(data[0][columns["Address"]], 16)
    offset = lambda r: int(r[columns["Address"]], 16) - base
    source = lambda r: r[columns["Source"]].strip()
    grow = [offset(r) for r in data if "USETMAXREG.TRY_ALLOC" in source(r)]
    shrink = [offset(r) for r in data if "USETMAXREG.DEALLOC" in source(r)]
    consumer = (min(grow), min(shrink)) if grow and shrink else (0, 1 << 40)

    def side(a, b, name):
        totals = collections.Counter()
        for r in data:
            if a <= offset(r) < b:
                for c in reasons:
                    totals[c[6:]] += number(r[columns[c]])
        all_samples = sum(totals.values()) or 1
        print("%s: %d samples; %s" % (name, all_samples, ", ".join(
            "%s %.1f%%" % (k, 100 * v / all_samples) for k, v in totals.most_common(10))))

    side(*consumer, "consumer")
    side(consumer[1], 1 << 40, "producer")
    chunk, per_issue = [], []

    def flush():
        if not chunk:
            return
        totals, ops = collections.Counter(), collections.Counter()
        for r in chunk:
            for c in reasons:
                totals[c[6:]] += number(r[columns[c]])
            ops[opcode(source(r))] += 1
        samples = sum(totals.values())
        per_issue.append(totals["selected"] / len(chunk))
        print("%06x-%06x %3d instr %7d samples  %-40s | %s" % (
            offset(chunk[0]), offset(chunk[-1]), len(chunk), samples,
            " ".join("%s:%d" % kv for kv in totals.most_common(3)),
            " ".join("%s %d" % kv for kv in ops.most_common(5))))
        chunk.clear()

    print("\nhot consumer instructions in address order (-- marks cold code between them):")
    for r in data:
        if not consumer[0] <= offset(r) < consumer[1]:
            continue
        if number(r[columns["Instructions Executed"]]) < args.hot:
            if chunk:
                flush()
                print("--")
            continue
        chunk.append(r)
        if len(chunk) == args.chunk:
            flush()
    flush()
    if per_issue:
        print("\nsamples per issued instruction (one issue cycle): %.1f" % (sum(per_issue) / len(per_issue)))


if __name__ == "__main__":
    main()
