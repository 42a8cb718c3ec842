import Foundation

extension V4L2Discovery {
    /// The text `winkctl cameras` prints: per device its names, card, driver and bus, then each format the
    /// camera sends (FourCC and description) with its sizes and frame rates, then the formats libv4l2
    /// converts to. With no device: "no V4L2 capture devices found". Nodes that could not be examined
    /// follow as one line each. Ends with a newline.
    public static func listing(_ list: V4L2DeviceList) -> String {
        var lines: [String] = []
        if list.devices.isEmpty { lines.append("no V4L2 capture devices found") }
        for device in list.devices {
            if !lines.isEmpty { lines.append("") }
            lines.append(device.stableName.map { "\($0) -> \(device.path)" } ?? device.path)
            let cap = device.capability
            lines.append("  card: \(cap.card), driver: \(cap.driver), bus: \(cap.busInfo)")
            for offer in device.formats where !offer.format.isEmulated {
                let flags = offer.format.isCompressed ? " (compressed)" : ""
                lines.append("  \(offer.format.pixelFormat.fourCC)  \(offer.format.description)\(flags)")
                for size in offer.sizes { lines.append("    " + describe(size)) }
            }
            let emulated = device.formats.filter(\.format.isEmulated).map(\.format.pixelFormat.fourCC)
            if !emulated.isEmpty { lines.append("  converted by libv4l2: \(emulated.joined(separator: ", "))") }
        }
        for problem in list.problems { lines.append(problem.description) }
        return lines.joined(separator: "\n") + "\n"
    }

    /// "640x480: 30, 15 fps" or "160x120 to 1280x720 step 8x8: 5 to 30 fps".
    static func describe(_ offer: V4L2FrameSizeOffer) -> String {
        let size: String = switch offer.entry {
        case .discrete(let s): "\(s)"
        case .stepwise(let minimum, let maximum, let step): "\(minimum) to \(maximum) step \(step)"
        }
        let rates: [String] = offer.intervals.map { interval in
            switch interval {
            case .discrete(let f): rate(f.framesPerSecond)
            // The longest interval (`maximum`) is the lowest rate.
            case .stepwise(let minimum, let maximum, _):
                "\(rate(maximum.framesPerSecond)) to \(rate(minimum.framesPerSecond))"
            }
        }
        return rates.isEmpty ? size : "\(size): \(rates.joined(separator: ", ")) fps"
    }

    /// A rate with at most two decimals and no trailing zeros: 30, 7.5, 29.97.
    static func rate(_ fps: Double) -> String {
        var text = String(format: "%.2f", fps)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }
}
