import WinkCore

extension CalibrationProfile {
    /// A `CoefficientModel` parameter that a profile can set from the person's own expressions.
    public enum Span: String, CaseIterable, Sendable {
        /// Eye-aspect-ratio drop, as a fraction of neutral, for eyeBlink = 1 (from eyesClosed, winkLeft, winkRight).
        case eyeAspectClosing
        /// Rise of the eye-state model's closed probability for eyeBlink = 1 (from eyesClosed, winkLeft, winkRight).
        case eyeClosedSpan
        /// Nose-to-chin growth per interocular for jawOpen = 1 (from mouthOpen).
        case jawSpan
        /// Mouth widening per interocular for the width half of mouthSmile = 1 (from smile).
        case smileWidthSpan
        /// Mean mouth-corner rise per interocular for the lift half of mouthSmile = 1 (from smile).
        case smileLiftSpan
        /// Inner-brow rise per interocular for browInnerUp = 1 (from browsUp).
        case browRaiseSpan

        /// The model parameter this span sets.
        public var keyPath: WritableKeyPath<CoefficientModel, Float> {
            switch self {
            case .eyeAspectClosing: \.eyeAspectClosing
            case .eyeClosedSpan: \.eyeClosedSpan
            case .jawSpan: \.jawSpan
            case .smileWidthSpan: \.smileWidthSpan
            case .smileLiftSpan: \.smileLiftSpan
            case .browRaiseSpan: \.browRaiseSpan
            }
        }

        /// The smallest recorded change (in the span's own units) taken as a real expression. A smaller one
        /// means the step was not performed (or not tracked), and a span from it would make the coefficient
        /// jump at noise, so the model's own span is kept.
        public var minimumChange: Float {
            switch self {
            case .eyeAspectClosing: 0.08  // 8% of the neutral aspect ratio
            case .eyeClosedSpan: 0.2
            case .jawSpan: 0.04
            case .smileWidthSpan: 0.02
            case .smileLiftSpan: 0.01
            case .browRaiseSpan: 0.02
            }
        }
    }

    /// What the profile says about one span.
    public struct SpanDerivation: Sendable, Equatable {
        /// The span described.
        public var span: Span
        /// The steps that were recorded and measured for this span (empty when none was).
        public var steps: [Step]
        /// The mean recorded change from neutral, in the span's units; `nil` when no step was recorded.
        public var change: Float?
        /// `reach x change`, or `nil` when nothing was recorded or the change is below `span.minimumChange`.
        public var value: Float?
    }

    /// The recorded change for every `Span`, in `Span.allCases` order.
    ///
    /// Eye spans average the changes of every eye that was closed on purpose: both eyes in `eyesClosed`,
    /// the left in `winkLeft`, the right in `winkRight` (the model has one eye span for both eyes). The
    /// aspect-ratio change is relative: (neutral - closed) / neutral, as `CoefficientModel` uses it.
    public func spanDerivations() -> [SpanDerivation] {
        let n = neutral
        var eyeAspect: [(Step, Float)] = []
        var closedRise: [(Step, Float)] = []
        func eye(_ step: Step, _ ear: KeyPath<FaceMeasures, Float>, _ closed: KeyPath<FaceMeasures, Float>) {
            guard let m = expressions[step] else { return }
            eyeAspect.append((step, (n[keyPath: ear] - m[keyPath: ear]) / max(n[keyPath: ear], 1e-3)))
            closedRise.append((step, m[keyPath: closed] - n[keyPath: closed]))
        }
        eye(.eyesClosed, \.eyeAspectLeft, \.eyeClosedLeft)
        eye(.eyesClosed, \.eyeAspectRight, \.eyeClosedRight)
        eye(.winkLeft, \.eyeAspectLeft, \.eyeClosedLeft)
        eye(.winkRight, \.eyeAspectRight, \.eyeClosedRight)
        func one(_ step: Step, _ change: (FaceMeasures) -> Float) -> [(Step, Float)] {
            expressions[step].map { [(step, change($0))] } ?? []
        }
        let changes: [Span: [(Step, Float)]] = [
            .eyeAspectClosing: eyeAspect,
            .eyeClosedSpan: closedRise,
            .jawSpan: one(.mouthOpen) { $0.jawDrop - n.jawDrop },
            .smileWidthSpan: one(.smile) { $0.mouthWidth - n.mouthWidth },
            .smileLiftSpan: one(.smile) {
                ($0.cornerLiftLeft - n.cornerLiftLeft + $0.cornerLiftRight - n.cornerLiftRight) / 2
            },
            .browRaiseSpan: one(.browsUp) { $0.innerBrowHeight - n.innerBrowHeight },
        ]
        return Span.allCases.map { span in
            let list = changes[span] ?? []
            var steps: [Step] = []
            for (s, _) in list where !steps.contains(s) { steps.append(s) }
            guard !list.isEmpty else { return SpanDerivation(span: span, steps: [], change: nil, value: nil) }
            let change = list.map(\.1).reduce(0, +) / Float(list.count)
            let value: Float? = change >= span.minimumChange ? reach * change : nil
            return SpanDerivation(span: span, steps: steps, change: change, value: value)
        }
    }

    /// `model` with every span this profile can derive replaced by the person's own (see
    /// `spanDerivations()`); the other parameters are kept. Coefficients from the result, taken against
    /// this profile's `neutral`, reach 1 at `reach` of each recorded expression: e.g. a profile whose
    /// `eyesClosed` measures are X gives eyeBlinkLeft = eyeBlinkRight = 1 at X.
    public func personalised(_ model: CoefficientModel) -> CoefficientModel {
        var result = model
        for d in spanDerivations() {
            guard var value = d.value else { continue }
            // The closed-probability ramp starts after the model's dead zone, so its span is what lies beyond it.
            if d.span == .eyeClosedSpan { value = max(0.02, value - model.eyeClosedDeadZone) }
            result[keyPath: d.span.keyPath] = value
        }
        return result
    }
}
