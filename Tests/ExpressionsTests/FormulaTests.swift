import Expressions
import Testing
import WinkCore

struct FormulaTests {
    func coefficients(_ pairs: [(BlendShape, Float)]) -> BlendShapeCoefficients {
        var c = BlendShapeCoefficients()
        for (s, v) in pairs { c[s] = v }
        return c
    }

    @Test func evaluatesWinkFormula() throws {
        let f = try Formula(parsing: "min(eyeBlinkLeft, 1 - eyeBlinkRight)")
        #expect(f.evaluate(coefficients([(.eyeBlinkLeft, 0.9), (.eyeBlinkRight, 0.1)])) == 0.9)
        #expect(abs(f.evaluate(coefficients([(.eyeBlinkLeft, 0.9), (.eyeBlinkRight, 0.8)])) - 0.2) < 1e-6)
        #expect(f.inputs == [.eyeBlinkLeft, .eyeBlinkRight])
    }

    @Test func precedenceAndClamping() throws {
        let c = coefficients([(.mouthSmileLeft, 0.6), (.mouthSmileRight, 0.2)])
        #expect(abs(try Formula(parsing: "(mouthSmileLeft + mouthSmileRight) / 2").evaluate(c) - 0.4) < 1e-6)
        #expect(abs(try Formula(parsing: "mouthSmileLeft + mouthSmileRight / 2").evaluate(c) - 0.7) < 1e-6)
        #expect(try Formula(parsing: "3 * mouthSmileLeft").evaluate(c) == 1)  // clamped
        #expect(try Formula(parsing: "-mouthSmileLeft").evaluate(c) == 0)
        #expect(abs(try Formula(parsing: "abs(mouthSmileRight - mouthSmileLeft)").evaluate(c) - 0.4) < 1e-6)
        #expect(try Formula(parsing: "jawOpen / eyeBlinkLeft").evaluate(c) == 0)  // a divisor that is 0 now
    }

    /// Found by a newcomer: 30,000 nested parentheses overflowed the parser's stack (exit 139).
    @Test func deepNestingIsAnErrorNotACrash() throws {
        let deep = String(repeating: "(", count: 30_000) + "jawOpen" + String(repeating: ")", count: 30_000)
        #expect(throws: Formula.ParseError.self) { try Formula(parsing: deep) }
        #expect(throws: Formula.ParseError.self) {
            try Formula(parsing: String(repeating: "-", count: 30_000) + "jawOpen")
        }
        let fine = String(repeating: "(", count: 20) + "jawOpen" + String(repeating: ")", count: 20)
        #expect(try Formula(parsing: fine) == .coefficient(.jawOpen))
    }

    @Test func rejectsUnknownNamesAndBadSyntax() throws {
        #expect(throws: Formula.ParseError.self) { try Formula(parsing: "eyeBlinkMiddle") }
        // A newcomer's finding: a constant divisor of 0 was taken, and the row never fired.
        for zero in ["mouthSmileLeft / 0", "jawOpen / (1 - 1)", "jawOpen / -0", "1 / (2 * 0)"] {
            #expect(throws: Formula.ParseError.self, "\(zero)") { try Formula(parsing: zero) }
        }
        #expect(try Formula(parsing: "jawOpen / (1 - eyeBlinkLeft)").evaluate(BlendShapeCoefficients()) == 0)
        #expect(try Formula(parsing: "jawOpen / 0.5") == .divide(.coefficient(.jawOpen), .constant(0.5)))
        #expect(throws: Formula.ParseError.self) { try Formula(parsing: "min(jawOpen") }
        #expect(throws: Formula.ParseError.self) { try Formula(parsing: "jawOpen jawOpen") }
        #expect(throws: Formula.ParseError.self) { try Formula(parsing: "sqrt(jawOpen)") }
        #expect(throws: Formula.ParseError.self) { try Formula(parsing: "") }
        do {
            _ = try Formula(parsing: "jawOpen + smile")
            Issue.record("expected an error")
        } catch let e as Formula.ParseError {
            #expect(e.position == 10)
            #expect(e.message.contains("unknown coefficient 'smile'"))
        } catch { Issue.record("wrong error \(error)") }
    }
}
