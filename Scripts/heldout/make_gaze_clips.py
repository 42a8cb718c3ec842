#!/usr/bin/env python3
"""Builds a check set of eyes rolled up and crossed: OUT/video + OUT/labels (SPEC.md format).

A funny face must fire nothing it does not do (issue 12), and no recording here rolls or crosses its eyes.
For each labelled clip of ../shared/fixtures/people, this finds runs where the labels say nothing happens to
the eyes (no eye event nor eye dontcare within 10 frames, a face present) and, in up to four of them, turns
1.2 s of open eyes: alternately "up" (each iris moved up under the upper lid, only its lower edge showing,
the opening filled with the eye's own brightest white) and "cross" (each iris moved towards the nose by 22%
of the eye's width). Irises and lids come from MediaPipe Face Mesh (refine_landmarks). The labels are copied
unchanged (pointing at the new video, the spans in "notes"), so any eye event inside a span is a false
positive. A drawn iris is not a real eye roll: this measures the risk, it does not prove an absence.

Not part of the test suite (it needs mediapipe); run it to check a change of the eye-state model or the eye
rows (README, "Accuracy"):

    apt-get install -y ffmpeg
    python3 -m venv /tmp/mw && /tmp/mw/bin/pip install "mediapipe==0.10.14" opencv-python-headless "numpy<2"
    /tmp/mw/bin/python Scripts/heldout/make_gaze_clips.py /tmp/winkd-heldout/gaze
    .build/release/winkctl evaluate /tmp/winkd-heldout/gaze

usage: make_gaze_clips.py OUT [NAME_SUBSTRING ...]   (default: every clip of the people set)
"""
import glob, json, os, sys
import cv2
import numpy as np
import mediapipe as mp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_synthetic_winks import rate_of, read_frames, write_video  # noqa: E402  (the same clip I/O)

SHARED = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "..", "shared")
PEOPLE = os.path.normpath(os.path.join(SHARED, "fixtures", "people"))
EYE_EVENTS = {"blink", "eyesClosed", "winkLeft", "winkRight"}
# Face Mesh indices per eye (the person's own side): outer corner, inner corner, upper lid middle, lower lid
# middle, and the lid contour.
EYES = {
    "right": (33, 133, 159, 145, [33, 7, 163, 144, 145, 153, 154, 155, 133, 173, 157, 158, 159, 160, 161, 246]),
    "left": (263, 362, 386, 374, [263, 249, 390, 373, 374, 380, 381, 382, 362, 398, 384, 385, 386, 387, 388, 466]),
}
SPAN_S = 1.2   # seconds of each turned span
MARGIN = 10    # frames kept clear of any labelled eye event or eye dontcare


def quiet_spans(labels, n, fps):
    """(start, end, mode) spans of open, uneventful eyes: one per quiet run long enough, at most four."""
    busy, face = np.zeros(n, bool), np.zeros(n, bool)
    for a, b in labels.get("face", []):
        face[a:b + 1] = True
    for key in ("events", "dontcare"):
        for e in labels.get(key, []):
            if e["event"] in EYE_EVENTS:
                busy[max(0, e["start"] - MARGIN):e["end"] + MARGIN + 1] = True
    free = face & ~busy
    length = int(round(SPAN_S * fps))
    runs, i = [], 0
    while i < n:
        if not free[i]:
            i += 1
            continue
        j = i
        while j < n and free[j]:
            j += 1
        if j - i >= length + MARGIN:
            runs.append((i, j - 1))
        i = j
    spans = []
    for (a, b), mode in zip(runs, ["up", "cross", "up", "cross"]):
        start = (a + b) // 2 - length // 2
        spans.append((start, start + length - 1, mode))
    return spans


def turn_eyes(img, p, mode):
    """`img` with both irises moved (`mode` "up" or "cross"); an eye too closed to show its iris is kept."""
    H, W = img.shape[:2]
    irises = [p[468], p[473]]
    out = img.astype(np.float32)
    for outer, inner, upper, lower, contour in EYES.values():
        a, b = p[outer], p[inner]
        width = float(np.linalg.norm(b - a))
        if width < 4:
            continue
        ux = (b - a) / width                      # along the eye, towards the nose
        uy = np.array([-ux[1], ux[0]])
        if np.dot(uy, p[lower] - p[upper]) < 0:   # down the face
            uy = -uy
        opening = float(np.dot(p[lower] - p[upper], uy))
        k = int(np.argmin([np.linalg.norm(c - (a + b) / 2) for c in irises]))
        centre = irises[k]
        radius = float(np.mean(np.linalg.norm(p[469 + 5 * k:473 + 5 * k] - centre, axis=1)))
        if radius < 2 or opening < 0.6 * radius:
            continue
        inside = np.zeros((H, W), np.uint8)
        cv2.fillPoly(inside, [np.round(p[contour]).astype(np.int32)], 255)
        iris = np.zeros((H, W), np.uint8)
        cv2.circle(iris, tuple(np.round(centre).astype(int)), int(1.15 * radius + 1), 255, -1)
        white = img[(inside > 0) & (iris == 0)]
        if len(white) < 5:
            continue
        bright = white.mean(axis=1)
        sclera = np.median(white[bright >= np.percentile(bright, 95)], axis=0)
        eye = img.copy()
        ys, xs = np.nonzero(inside)
        depth = np.clip(((np.stack([xs, ys], 1) - p[upper]) @ uy) / max(opening, 1.0), 0, 1)
        eye[ys, xs] = np.clip(sclera[None, :] * (0.9 + 0.1 * depth)[:, None], 0, 255).astype(np.uint8)
        shift = -uy * (0.5 * opening + 0.2 * radius) if mode == "up" else ux * 0.22 * width
        moved = cv2.warpAffine(img, np.float32([[1, 0, shift[0]], [0, 1, shift[1]]]), (W, H),
                               borderMode=cv2.BORDER_REFLECT)
        disc = np.zeros((H, W), np.uint8)
        cv2.circle(disc, tuple(np.round(centre + shift).astype(int)), int(1.05 * radius), 255, -1)
        show = (disc > 0) & (inside > 0)
        eye[show] = moved[show]
        eye = cv2.GaussianBlur(eye, (3, 3), 0)
        soft = cv2.GaussianBlur(inside.astype(np.float32) / 255, (5, 5), 0)[..., None]
        out = out * (1 - soft) + eye.astype(np.float32) * soft
    return np.clip(out, 0, 255).astype(np.uint8)


def build(labels_path, root):
    labels = json.load(open(labels_path))
    video = os.path.join(PEOPLE, labels["video"])
    rate = rate_of(video)
    num, _, den = rate.partition("/")
    fps = float(num) / float(den or 1)
    frames = read_frames(video)
    spans = quiet_spans(labels, len(frames), fps)
    if not spans:
        print(f"{os.path.basename(labels_path)}: no quiet span of {SPAN_S} s, skipped")
        return
    mode_of = {f: mode for s, e, mode in spans for f in range(s, e + 1)}
    mesh = mp.solutions.face_mesh.FaceMesh(static_image_mode=False, max_num_faces=1, refine_landmarks=True)
    changed = 0
    for f, img in enumerate(frames):
        found = mesh.process(cv2.cvtColor(img, cv2.COLOR_BGR2RGB))  # every frame, so the tracker follows
        if f in mode_of and found.multi_face_landmarks:
            H, W = img.shape[:2]
            p = np.array([[q.x * W, q.y * H] for q in found.multi_face_landmarks[0].landmark], np.float32)
            frames[f] = turn_eyes(img, p, mode_of[f])
            changed += 1
    name = os.path.basename(video).rsplit(".", 1)[0] + "_gaze"
    out = os.path.join(root, "video", name + ".mp4")
    write_video(frames, rate, out)
    labels["video"] = "video/" + name + ".mp4"
    labels["notes"] = "eyes turned (make_gaze_clips.py): " + ", ".join(f"{m} {s}-{e}" for s, e, m in spans)
    with open(os.path.join(root, "labels", name + ".labels.json"), "w") as f:
        json.dump(labels, f, indent=1)
    print(f"{name}: {labels['notes']} ({changed} frames)")


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        raise SystemExit(__doc__.strip().splitlines()[-1])
    root = sys.argv[1]
    os.makedirs(os.path.join(root, "video"), exist_ok=True)
    os.makedirs(os.path.join(root, "labels"), exist_ok=True)
    for path in sorted(glob.glob(os.path.join(PEOPLE, "labels", "*.labels.json"))):
        if len(sys.argv) > 2 and not any(s in os.path.basename(path) for s in sys.argv[2:]):
            continue
        build(path, root)


if __name__ == "__main__":
    main()
