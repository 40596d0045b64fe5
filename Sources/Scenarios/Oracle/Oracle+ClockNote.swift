import Replica
@_spi(Kernel) import Simulator

extension Oracle {
  /// "(device clocks: iPad +10m; phone's clock jumped -5m at 20.000s)" when any clock is
  /// skewed, drifting or jumped, else "".
  var clockNote: String {
    var parts: [String] = []
    for (i, c) in world.config.clocks.enumerated() where c.skew != .zero || c.driftPPM != 0 {
      var p = "\(world.config.deviceNames[i]) \(c.skew.nanoseconds >= 0 ? "+" : "")\(c.skew)"
      if c.driftPPM != 0 { p += " \(c.driftPPM > 0 ? "+" : "")\(c.driftPPM)ppm" }
      parts.append(p)
    }
    let jumps = world.facts.clockJumps.map { j in
      "\(deviceName(j.device))'s clock jumped \(j.by.nanoseconds >= 0 ? "+" : "")\(j.by) at \(j.time)"
    }
    guard !parts.isEmpty || !jumps.isEmpty else { return "" }
    let clocks = parts.isEmpty ? "" : "device clocks: " + parts.joined(separator: ", ")
    return " (" + ([clocks] + jumps).filter { !$0.isEmpty }.joined(separator: "; ") + ")"
  }
}
