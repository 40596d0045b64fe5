import Replica
@_spi(Kernel) import Simulator

/// The faults one fuzz seed runs under, drawn per seed (swarm testing: each seed turns some
/// faults on, hard, and leaves others off). Printed first in every failure report.
public struct SwarmProfile: Hashable, Sendable, CustomStringConvertible {
  public var devices: [String]
  public var duration: SimDuration
  public var latency: LatencyModel
  public var loss: Probability
  public var duplicate: Probability
  public var push: PushSetting
  public var autosync: SimDuration?
  public var retention: SimDuration?
  public var skews: [(device: String, skew: SimDuration, driftPPM: Int64)]
  public var offlineWindows: Int
  public var longOffline: Bool
  public var kills: Int
  public var backgroundWindows: Int
  public var clockJumps: Int
  public var outages: Int
  public var intents: Int

  public static func == (a: SwarmProfile, b: SwarmProfile) -> Bool { a.description == b.description }
  public func hash(into h: inout Hasher) { h.combine(description) }

  public var description: String {
    var parts = [
      "devices \(devices.joined(separator: " "))",
      "intents \(intents) over \(duration)",
      "latency \(latency)",
      "loss \(loss)", "duplicate \(duplicate)",
      "push \(push == .on ? "on" : push == .off ? "off" : { if case .lossy(let p) = push { return "\(p)" }; return "?" }())",
      "autosync \(autosync.map(\.description) ?? "off")",
    ]
    if let retention { parts.append("retention \(retention)") }
    let clocks = skews.map { "\($0.device) \($0.skew.nanoseconds >= 0 ? "+" : "")\($0.skew) \($0.driftPPM)ppm" }
    parts.append("clocks " + (clocks.isEmpty ? "perfect" : clocks.joined(separator: ", ")))
    parts.append("offline windows \(offlineWindows)\(longOffline ? " (one of them days long)" : "")")
    parts.append("kills \(kills)")
    parts.append("background windows \(backgroundWindows)")
    parts.append("clock jumps \(clockJumps)")
    parts.append("server outages \(outages)")
    return parts.joined(separator: " · ")
  }
}
