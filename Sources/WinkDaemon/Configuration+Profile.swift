import Expressions
import Foundation
import WinkCore

extension Configuration {
    /// `profilePath` as a path to open: a relative path from a configuration file is taken relative to
    /// that file's directory (as a path on the command line is relative to the working directory).
    public var resolvedProfilePath: String? {
        guard let p = profilePath else { return nil }
        guard !p.hasPrefix("/"), let base = path else { return p }
        return URL(fileURLWithPath: base).deletingLastPathComponent().appendingPathComponent(p).path
    }

    /// This configuration personalised with its calibration profile, if it names one: the coefficient
    /// model's spans become the person's own (`CalibrationProfile.personalised`), and the profile's neutral
    /// is returned as the prior for `FramePipeline(configuration:predictor:prior:)`. Without a profile,
    /// the configuration unchanged and `nil`.
    /// - Throws: `CalibrationProfileError`: `.missing` (66) or `.corrupt` (78), naming the profile file.
    public func applyingProfile() throws -> (configuration: Configuration, prior: FaceMeasures?) {
        guard let path = resolvedProfilePath else { return (self, nil) }
        let profile = try CalibrationProfile.load(path: path)
        var c = self
        c.coefficients = profile.personalised(coefficients)
        return (c, profile.prior)
    }
}
