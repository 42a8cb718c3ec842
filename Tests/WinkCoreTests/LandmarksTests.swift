import Testing
import WinkCore

struct LandmarksTests {
    @Test func mirrorIndexIsAnInvolutionThatSwapsEyes() {
        for i in 0..<68 { #expect(Landmarks.mirrorIndex[Landmarks.mirrorIndex[i]] == i) }
        #expect(Landmarks.mirrorIndex[36] == 45)
        #expect(Landmarks.mirrorIndex[39] == 42)
        #expect(Landmarks.mirrorIndex[48] == 54)
        #expect(Landmarks.mirrorIndex[30] == 30)
        #expect(Landmarks.mirrorIndex[8] == 8)
    }

    @Test func mirroringKeepsEachIndexOnTheSamePartOfThePerson() {
        var lm = Landmarks(points: InlineArray(repeating: PixelPoint(0, 0)))
        lm[36] = PixelPoint(10, 50)  // right eye outer corner, image left
        lm[45] = PixelPoint(90, 50)  // left eye outer corner, image right
        let m = lm.mirrored(imageWidth: 101)
        // In the mirrored image the person's right eye is on the image's right.
        #expect(m[36] == PixelPoint(10, 50))
        #expect(m[45] == PixelPoint(90, 50))
        lm[37] = PixelPoint(20, 45)
        let m2 = lm.mirrored(imageWidth: 101)
        #expect(m2[44] == PixelPoint(80, 45))
    }

    @Test func boundingBoxOfAGroup() {
        var lm = Landmarks(points: InlineArray(repeating: PixelPoint(5, 5)))
        lm[42] = PixelPoint(1, 2)
        lm[45] = PixelPoint(7, 9)
        let box = lm.boundingBox(.leftEye)
        #expect(box == PixelRect(x: 1, y: 2, width: 6, height: 7))
    }
}
