#!/usr/bin/env python3
"""Builds the people set again as a webcam or a streamed video would degrade it: OUT/VARIANT/{video,labels}.

Light from one side darkens one eye more than the other, which must not read as a wink, and a video that
went through a low bitrate loses the fine texture of lids and lashes the eye-state model reads. For each
labelled clip of ../shared/fixtures/people this writes, with FFmpeg alone:

    lossless   the frames unchanged, x264 lossless (-qp 0): the control, so that a variant's change is its
               own and not the re-encoding's
    side-left  brightness falling linearly from x1.0 at the image's right edge to x0.3 at its left edge
    side-right the same from the other side (x0.3 at the right edge)
    crf32      x264 CRF 32 (about 50 kbit/s for a 224x224 face at 25 fps: a poor video call)
    crf38      x264 CRF 38 (about 30 kbit/s there: blocks and smears, harsher than most streams)
    mirrored   the frames flipped left to right, x264 lossless, the labels saying "mirrored": true (a selfie
               camera's view): left and right must stay the person's own, and the eyes read alike either way

Brightness is scaled on luma only (FFmpeg's geq filter). The labels are copied unchanged, pointing at the new
video. Not part of the test suite (it takes about 4 minutes on 2 cores); run it to check a change of the
eye-state model or the eye rows (README, "Accuracy"):

    apt-get install -y ffmpeg
    python3 Scripts/heldout/make_degraded_clips.py /tmp/winkd-heldout/degraded
    for v in lossless side-left side-right crf32 crf38 mirrored; do
        .build/release/winkctl evaluate /tmp/winkd-heldout/degraded/$v; done

usage: make_degraded_clips.py OUT [VARIANT ...]   (default: every variant)
"""
import glob, json, os, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

SHARED = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "..", "shared")
PEOPLE = os.path.normpath(os.path.join(SHARED, "fixtures", "people"))
LOSSLESS = ["-c:v", "libx264", "-qp", "0"]


def side_light(gain):
    """A geq filter scaling luma by GAIN, an expression of X/W (0 at the left edge, 1 at the right)."""
    return ["-vf", f"geq=lum='lum(X,Y)*({gain})':cb='cb(X,Y)':cr='cr(X,Y)'"]


VARIANTS = {
    "lossless": LOSSLESS,
    "side-left": side_light("0.3+0.7*X/W") + LOSSLESS,
    "side-right": side_light("1.0-0.7*X/W") + LOSSLESS,
    "crf32": ["-c:v", "libx264", "-crf", "32"],
    "crf38": ["-c:v", "libx264", "-crf", "38"],
    "mirrored": ["-vf", "hflip"] + LOSSLESS,
}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    root, wanted = sys.argv[1], sys.argv[2:] or list(VARIANTS)
    unknown = [v for v in wanted if v not in VARIANTS]
    if unknown:
        sys.exit(f"unknown variant {unknown[0]!r}; one of: {', '.join(VARIANTS)}")
    jobs = []
    for variant in wanted:
        os.makedirs(os.path.join(root, variant, "video"), exist_ok=True)
        os.makedirs(os.path.join(root, variant, "labels"), exist_ok=True)
        for path in sorted(glob.glob(os.path.join(PEOPLE, "labels", "*.labels.json"))):
            labels = json.load(open(path))
            name = os.path.basename(path)[:-len(".labels.json")]
            source = os.path.join(PEOPLE, labels["video"])
            out = os.path.join(root, variant, "video", name + ".mp4")
            labels["video"] = "video/" + name + ".mp4"
            if variant == "mirrored":
                labels["mirrored"] = not labels.get("mirrored", False)
            with open(os.path.join(root, variant, "labels", os.path.basename(path)), "w") as f:
                json.dump(labels, f, indent=1)
            jobs.append(["ffmpeg", "-v", "error", "-y", "-i", source, *VARIANTS[variant],
                         "-pix_fmt", "yuv420p", "-an", out])
    with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        failed = [j[-1] for j, rc in zip(jobs, pool.map(lambda j: subprocess.run(j).returncode, jobs)) if rc]
    if failed:
        sys.exit(f"ffmpeg failed for {len(failed)} clips, first {failed[0]}")
    print(f"{len(jobs)} clips written under {root}")


if __name__ == "__main__":
    main()
