#!/usr/bin/env python3
"""Builds checks of a face leaving and of another person arriving: OUT/{session,returns,control}.

A daemon runs for hours, and the face in front of the camera leaves and comes back, or another person sits
down (a carer, a colleague, the next interviewee). Every clip of ../shared/fixtures/people is letterboxed
into 640x480 at 30 fps (each output frame shows the source frame of its time), and:

- OUT/session: the clips back to back, each after GAP seconds of an empty scene (smooth grey texture, no
  face), so each person arrives while what winkd learned of the people before them is in its 60 s window;
- OUT/returns: each clip twice, GAP seconds apart: the same person leaving and coming back;
- OUT/control: each clip once.

Each has video/ and labels/ (SPEC.md format): the clips' own labels moved to the output frames (ranges
widened over repeated frames, tolerances scaled to 30 fps). Every face range ends with its clip, so a
faceLost is expected in each gap and a faceFound at each arrival. Against the control, OUT/session shows
what the people before cost each person, OUT/returns what leaving costs (twice the control's counts, less
the faces, is no cost):

    apt-get install -y ffmpeg
    python3 -m venv /tmp/cv && /tmp/cv/bin/pip install opencv-python-headless "numpy<2"
    /tmp/cv/bin/python Scripts/heldout/make_people_session.py /tmp/winkd-heldout/session
    for s in session returns control; do .build/release/winkctl evaluate /tmp/winkd-heldout/session/$s; done

usage: make_people_session.py OUT [GAP_SECONDS]   (default 4 s: longer than calibration.forgetAfterAbsence)
"""
import glob, json, math, os, sys

import cv2
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_synthetic_winks import rate_of, read_frames, write_video  # noqa: E402  (the same clip I/O)

SHARED = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "..", "shared")
PEOPLE = os.path.normpath(os.path.join(SHARED, "fixtures", "people"))
W, H, FPS = 640, 480, 30


def letterbox(img):
    h, w = img.shape[:2]
    s = min(W / w, H / h)
    nw, nh = max(1, round(w * s)), max(1, round(h * s))
    out = np.zeros((H, W, 3), np.uint8)
    x, y = (W - nw) // 2, (H - nh) // 2
    out[y:y + nh, x:x + nw] = cv2.resize(img, (nw, nh), interpolation=cv2.INTER_AREA if s < 1 else cv2.INTER_CUBIC)
    return out


def empty_scene(seed):
    """A room-like frame without a face: smooth grey texture of mid brightness."""
    rng = np.random.default_rng(seed)
    small = rng.uniform(70, 170, (6, 8, 3)).astype(np.float32)
    return cv2.resize(small, (W, H), interpolation=cv2.INTER_CUBIC).clip(0, 255).astype(np.uint8)


def convert(labels_path):
    """The clip's frames at 30 fps in 640x480 and its labels moved to them (face, events, dontcare, absent)."""
    L = json.load(open(labels_path))
    src = os.path.normpath(os.path.join(os.path.dirname(labels_path), "..", L["video"]))
    frames = read_frames(src)
    num, _, den = rate_of(src).partition("/")
    fps = float(num) / float(den or 1)
    n_out = int(math.floor(len(frames) * FPS / fps + 1e-9))
    index = [min(len(frames) - 1, int(math.floor(i * fps / FPS + 1e-9))) for i in range(n_out)]
    out = [letterbox(frames[i]) for i in index]
    tol = L.get("tolerance_frames", 3)

    def move(s, e):
        hits = [i for i, k in enumerate(index) if s <= k <= e]
        return (hits[0], hits[-1]) if hits else None

    def entry(d, tolerance=True):
        r = move(d["start"], d["end"])
        if r is None:
            return None
        n = dict(d)
        n["start"], n["end"] = r
        if tolerance:
            n["tolerance_frames"] = int(math.ceil(d.get("tolerance_frames", tol) * FPS / fps))
        return n

    labels = {
        "face": [list(move(a, b)) for a, b in L["face"] if move(a, b)],
        "events": [e for e in map(entry, L.get("events", [])) if e],
        "dontcare": [e for e in (entry(d, tolerance=False) for d in L.get("dontcare", [])) if e],
        "absent": L.get("absent", []),
    }
    return out, labels


def shifted(L, off):
    return {"face": [[a + off, b + off] for a, b in L["face"]],
            **{k: [dict(e, start=e["start"] + off, end=e["end"] + off) for e in L[k]] for k in ("events", "dontcare")}}


def write_set(root, name, frames, doc):
    write_video(frames, str(FPS), os.path.join(root, "video", name + ".mp4"))
    with open(os.path.join(root, "labels", name + ".labels.json"), "w") as f:
        json.dump(dict(doc, video=f"video/{name}.mp4", frames=len(frames), nominal_fps=FPS, mirrored=False,
                       tolerance_frames=3), f, indent=1)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    root = os.path.abspath(sys.argv[1])
    gap_s = float(sys.argv[2]) if len(sys.argv) == 3 else 4.0
    for s in ("session", "returns", "control"):
        for d in ("video", "labels"):
            os.makedirs(os.path.join(root, s, d), exist_ok=True)
    stream, session = [], {"face": [], "events": [], "dontcare": [], "absent": None}
    notes = []
    for k, path in enumerate(sorted(glob.glob(os.path.join(PEOPLE, "labels", "*.labels.json")))):
        name = os.path.basename(path).replace(".labels.json", "")
        frames, L = convert(path)
        gap = [empty_scene(k)] * int(round(gap_s * FPS))
        write_set(os.path.join(root, "control"), name, frames, dict(L, notes=f"{name} in {W}x{H} at {FPS} fps"))
        # The same person again after the gap: what is learned of them should help, or at least not hurt.
        twice = {key: shifted(L, 0)[key] + shifted(L, len(frames) + len(gap))[key]
                 for key in ("face", "events", "dontcare")}
        write_set(os.path.join(root, "returns"), name, frames + gap + frames,
                  dict(twice, absent=L["absent"], notes=f"{name} twice, {gap_s} s apart"))
        stream += gap
        off = len(stream)
        stream += frames
        for key, value in shifted(L, off).items():
            session[key] += value
        # A name absent from one clip may happen in another: its occurrences there are scored as false
        # positives anyway (unmatched, outside that clip's dontcare), so only names absent from all stay absent.
        session["absent"] = [a for a in (L["absent"] if k == 0 else session["absent"]) if a in L["absent"]]
        notes.append(f"{name} {off}-{len(stream) - 1}")
        print(f"{name}: frames {off}-{len(stream) - 1}")
    stream += [empty_scene(99)] * int(round(gap_s * FPS))
    write_set(os.path.join(root, "session"), "session", stream,
              dict(session, notes=f"people clips back to back after {gap_s} s without a face: " + ", ".join(notes)))
    print(f"session: {len(stream)} frames")


if __name__ == "__main__":
    main()
