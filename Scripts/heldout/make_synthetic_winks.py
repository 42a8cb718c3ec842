#!/usr/bin/env python3
"""Builds a check set of winks made from real closures of both eyes: OUT/video + OUT/labels (SPEC.md format).

For each real closure of both eyes (SPANS below), make two clips with ../shared/tools/make_wink.py:
a LEFT wink (--keep-open right) and a RIGHT wink (--keep-open left), then trim the result to the span
plus CONTEXT_S seconds on each side (frames decoded with OpenCV, re-encoded with ffmpeg at the source's
exact rate), and write labels/NAME.labels.json in SPEC.md's format.

The spans were chosen by looking at every frame (label_sheets.py); none is used to train the eye-state model
as a wink. Not part of the test suite (it needs mediapipe for make_wink.py); run it to check a change of the
wink rows or the eye-state model (README, "Accuracy"):

    apt-get install -y ffmpeg
    python3 -m venv /tmp/mw && /tmp/mw/bin/pip install "mediapipe==0.10.14" opencv-python-headless "numpy<2"
    /tmp/mw/bin/python Scripts/heldout/make_synthetic_winks.py /tmp/winkd-heldout/winks
    .build/release/winkctl evaluate /tmp/winkd-heldout/winks --verbose

usage: make_synthetic_winks.py OUT [--labels-only] [NAME_SUBSTRING ...]   (default: all)
"""
import json, math, os, subprocess, sys
from fractions import Fraction
import cv2

SHARED = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "..", "shared")
PEOPLE = os.path.normpath(os.path.join(SHARED, "fixtures", "people"))
TOOL = os.path.normpath(os.path.join(SHARED, "tools", "make_wink.py"))
PY = sys.executable
CONTEXT_S = 2.0
ROOT = None  # set from the command line

# source clip, tag, wink span (inclusive frames, both eyes shut in the source), donor frame (both eyes open), why
SPANS = [
    ("liveportrait_d14", "a", 140, 204, 75, "young woman, eyes lowered and shut (label eyesClosed 140-204, lids flicker to slits)"),
    ("liveportrait_d3", "a", 108, 160, 54, "woman looking down, frowning, lids shut over the iris (source dontcare eyesClosed)"),
    ("liveportrait_d3", "b", 219, 255, 183, "woman looking down, lids shut (source dontcare eyesClosed)"),
    ("xportrait_driving_video", "a", 24, 29, 22, "man with dreadlocks, squeezed closure (label eyesClosed 24-29, 12 fps)"),
    ("xportrait_driving_video", "b", 44, 48, 42, "man with dreadlocks, squeezed closure with pursed lips (label blink 44-48, 12 fps)"),
    ("liveportrait_d11", "a", 148, 156, 141, "small child, closure while grinning and looking down (label blink 148-156)"),
    ("liveportrait_d9", "a", 520, 533, 512, "man with glasses, slow closure (label blink 520-533)"),
    ("liveportrait_d9", "b", 554, 565, 548, "man with glasses, slow closure (label blink 554-565)"),
    ("liveportrait_d9", "c", 380, 389, 377, "man with glasses, slow closure (label blink 380-389), 0.37 s after a blink 363-369"),
    ("pcavs_vox_Audio_Source_00104", "a", 240, 247, 236, "man in TV interview, 224x224, closure during a head turn (label blink 240-247)"),
]

EYE_CLOSURE = {"blink", "eyesClosed"}

# the other wink side is made absent where the source did not say so, after checking the whole kept range
# (label_sheets of the synthetic clip: no stretch where that eye is closed and the other open, nothing labelled)
EXTRA_ABSENT = {"liveportrait_d14_a_winkRight": "winkLeft"}


def read_frames(path):
    cap = cv2.VideoCapture(path)
    out = []
    while True:
        ok, img = cap.read()
        if not ok:
            break
        out.append(img)
    return out


def rate_of(path):
    """The stream's exact frame rate as FFmpeg's rational ("30000/1001"), as make_wink.py reads it."""
    return subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                           "stream=avg_frame_rate", "-of", "default=nw=1:nk=1", path],
                          capture_output=True, text=True, check=True).stdout.strip()


def write_video(frames, rate, out):
    H, W = frames[0].shape[:2]
    p = subprocess.Popen(["ffmpeg", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "bgr24",
                          "-s", f"{W}x{H}", "-r", rate, "-i", "-", "-c:v", "libx264", "-crf", "16",
                          "-pix_fmt", "yuv420p", out], stdin=subprocess.PIPE)
    for f in frames:
        p.stdin.write(f.tobytes())
    p.stdin.close()
    if p.wait() != 0:
        sys.exit(f"ffmpeg failed for {out}")


def overlap(s, e, a, b):
    return s <= b and e >= a


def make_labels(src, name, side, s, e, a, b, donor, why):
    L = json.load(open(f"{PEOPLE}/labels/{src}.labels.json"))
    wink = "winkLeft" if side == "left" else "winkRight"
    other = "winkRight" if side == "left" else "winkLeft"
    events, dontcare = [], []
    for ev in L.get("events", []):
        if not overlap(ev["start"], ev["end"], a, b):
            continue
        n = dict(ev)
        n["start"], n["end"] = max(ev["start"], a) - a, min(ev["end"], b) - a
        cut = ev["start"] < a or ev["end"] > b
        if ev["event"] in EYE_CLOSURE and overlap(ev["start"], ev["end"], s, e):
            n.pop("tolerance_frames", None)
            # the closure is now a wink: a blink/eyesClosed there is neither right nor wrong. A blink is decided
            # when the eyes reopen, so keep the window the scorer gives a blink label after its end (the kept-open
            # eye falls back to the source's half-open reopening frames right after the span).
            tol = ev.get("tolerance_frames", L["tolerance_frames"])
            n["end"] = min(b, ev["end"] + max(tol, math.ceil(0.15 * L["nominal_fps"]))) - a
            dontcare.append(n)
        elif cut:
            n.pop("tolerance_frames", None)
            dontcare.append(n)      # cut by the trim: its onset may be gone
        else:
            events.append(n)
    for dc in L.get("dontcare", []):
        if not overlap(dc["start"], dc["end"], a, b):
            continue
        n = dict(dc)
        n["start"], n["end"] = max(dc["start"], a) - a, min(dc["end"], b) - a
        dontcare.append(n)
    events.append({"event": wink, "start": s - a, "end": e - a})
    events.sort(key=lambda x: (x["start"], x["event"]))
    dontcare.sort(key=lambda x: (x["start"], x["event"]))
    absent = [x for x in L.get("absent", []) if x != wink]
    # the other side stays absent only if the source had it absent and nothing kept is labelled or dontcare for it
    if other in absent and any(x["event"] == other for x in events + dontcare):
        absent.remove(other)
    if EXTRA_ABSENT.get(name) == other and other not in absent:
        absent.append(other)
    face = [[max(f0, a) - a, min(f1, b) - a] for f0, f1 in L["face"] if overlap(f0, f1, a, b)]
    keep = "right" if side == "left" else "left"
    return {
        "video": f"video/{name}.mp4",
        "frames": b - a + 1,
        "nominal_fps": L["nominal_fps"],
        "mirrored": False,
        "tolerance_frames": L["tolerance_frames"],
        "face": face,
        "events": events,
        "dontcare": dontcare,
        "absent": absent,
        "notes": (f"Synthetic {side.upper()} wink (person's own {side} eye closed, {keep} eye kept open) made with "
                  f"shared/tools/make_wink.py --keep-open {keep} --span {s} {e} --donor {donor} on people/video/{src}.mp4 "
                  f"({why}), trimmed to source frames {a}-{b} (frame 0 here = source frame {a}). "
                  f"Wink {s - a}-{e - a}. Source labels in range kept and shifted; blink/eyesClosed over the span made dontcare. "
                  f"Source notes: {L.get('notes', '')}"),
    }


def main():
    global ROOT
    args = [x for x in sys.argv[1:] if x != "--labels-only"]
    if not args:
        sys.exit(__doc__)
    ROOT, only = os.path.abspath(args[0]), args[1:]
    labels_only = "--labels-only" in sys.argv
    os.makedirs(f"{ROOT}/video", exist_ok=True); os.makedirs(f"{ROOT}/labels", exist_ok=True)
    os.makedirs(f"{ROOT}/work", exist_ok=True)
    made = []
    for src, tag, s, e, donor, why in SPANS:
        vid = f"{PEOPLE}/video/{src}.mp4"
        rate = rate_of(vid)
        fps = float(Fraction(rate))
        n_src = json.load(open(f"{PEOPLE}/labels/{src}.labels.json"))["frames"]
        ctx = int(round(CONTEXT_S * fps))
        a, b = max(0, s - ctx), min(n_src - 1, e + ctx)
        for side in ("left", "right"):
            keep = "right" if side == "left" else "left"
            name = f"{src}_{tag}_wink{side.capitalize()}"
            if only and not any(o in name for o in only):
                continue
            full = f"{ROOT}/work/{name}_full.mp4"
            warn = []
            if labels_only:
                lab = make_labels(src, name, side, s, e, a, b, donor, why)
                json.dump(lab, open(f"{ROOT}/labels/{name}.labels.json", "w"), indent=2)
                print(f"{name}: labels rewritten")
                continue
            r = subprocess.run([PY, TOOL, vid, full, "--keep-open", keep, "--span", str(s), str(e),
                                "--donor", str(donor)], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"make_wink failed for {name}: {r.stderr[-2000:]}")
            warn = [l for l in r.stderr.splitlines() if "no face" in l]
            frames = read_frames(full)
            if len(frames) != n_src:
                print(f"warning: {name}: {len(frames)} decoded frames, labels say {n_src}", file=sys.stderr)
            write_video(frames[a:b + 1], rate, f"{ROOT}/video/{name}.mp4")
            lab = make_labels(src, name, side, s, e, a, b, donor, why)
            if warn:
                lab["notes"] += " make_wink warnings: " + "; ".join(warn)
            json.dump(lab, open(f"{ROOT}/labels/{name}.labels.json", "w"), indent=2)
            made.append((name, src, s, e, side, donor, a, b, warn))
            print(f"{name}: source {src} span {s}-{e} side {side} donor {donor} kept {a}-{b} ({b - a + 1} frames @ {rate})"
                  + (f" WARN {warn}" if warn else ""), flush=True)


if __name__ == "__main__":
    main()
