#!/usr/bin/env python3
"""Builds a false-wink check from ../shared/fixtures/blinks: OUT/video + OUT/labels (SPEC.md format).

The Eyeblink8 cuts (three people, one with and without glasses; 640x480 webcam video, 30 fps) are played
back to back, one stream per folder, in the order of their numbers. Their cut points do not match the
blinks they are named after (most cuts show open eyes throughout), so blinks and eye closures are not
scored: every eye event except the winks is `dontcare`, and winks are `absent`. The stream has no wink,
so whatever wink winkd reports on it is false. 2,895 frames in all.

    python3 -m venv /tmp/cv && /tmp/cv/bin/pip install opencv-python-headless "numpy<2"
    /tmp/cv/bin/python Scripts/heldout/make_eyeblink8_stream.py /tmp/winkd-heldout/eyeblink8
    .build/release/winkctl evaluate /tmp/winkd-heldout/eyeblink8      # the "false winks" line
"""
import glob, json, os, re, sys

import cv2

BLINKS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared",
                                       "fixtures", "blinks"))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out_dir = os.path.abspath(sys.argv[1])
    os.makedirs(os.path.join(out_dir, "video"), exist_ok=True)
    os.makedirs(os.path.join(out_dir, "labels"), exist_ok=True)
    for folder in sorted(glob.glob(os.path.join(BLINKS, "EyeBlink8_*"))):
        name = os.path.basename(folder)
        cuts = sorted(glob.glob(os.path.join(folder, "*.mp4")),
                      key=lambda f: int(re.search(r"calibration(\d+)_", f).group(1)))
        writer, n = None, 0
        for cut in cuts:
            capture = cv2.VideoCapture(cut)
            while True:
                ok, frame = capture.read()
                if not ok:
                    break
                if writer is None:
                    writer = cv2.VideoWriter(os.path.join(out_dir, "video", name + ".mp4"),
                                             cv2.VideoWriter_fourcc(*"mp4v"), 30, (frame.shape[1], frame.shape[0]))
                writer.write(frame)
                n += 1
        writer.release()
        labels = {
            "video": f"video/{name}.mp4", "frames": n, "nominal_fps": 30, "tolerance_frames": 3,
            "face": [[0, n - 1]], "events": [],
            "dontcare": [{"event": e, "start": 0, "end": n - 1}
                         for e in ("blink", "eyesClosed", "smile", "mouthOpen", "faceFound", "faceLost")],
            "absent": ["winkLeft", "winkRight"],
            "notes": f"{len(cuts)} Eyeblink8 cuts of {name} back to back: only false winks are scored",
        }
        with open(os.path.join(out_dir, "labels", name + ".labels.json"), "w") as f:
            json.dump(labels, f, indent=1)
        print(f"{name}: {len(cuts)} cuts, {n} frames")


if __name__ == "__main__":
    main()
