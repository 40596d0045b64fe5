import Replica
@_spi(Kernel) import Simulator

/// The causal chain behind every anomaly of a run, in plain text: which intents, which messages
/// in which order, and why the winner won (arrival order, device clocks and skews, HLC values,
/// a tombstone purged after the retention window…).
///
///     let result = ScenarioRunner.run(try Scenario.load("fat-note-lww"), keepEvents: true)
///     print(Explanation.render(result))
///
/// The oracle judged the run without looking at any policy metadata; an explanation may read it
/// (stamps, change tags, tokens), because it describes the mechanism that produced the outcome.
///
/// - Important: The messages come from the full trace: run with `keepEvents: true` (or use
///   ``render(_:seed:policy:)``). A hash-only result is explained from intents and facts only.
public enum Explanation {
  /// The explanation of a finished run.
  public static func render(_ result: ScenarioRunner.Result) -> String {
    Explainer(result).text()
  }

  /// Runs `file` (optionally with another seed or policy) and explains it, with the messages of
  /// the full trace (see ``run(_:app:seed:policy:)``).
  public static func render(_ file: ScenarioFile, seed: UInt64? = nil, policy: PolicySpec? = nil) -> String {
    run(file, seed: seed, policy: policy).text
  }

  /// Runs `file` — with a user's app on every device, or under a policy (the file's, or
  /// `policy`) — and explains it: the text ``render(_:)`` gives for the run kept with its full
  /// trace, and that run.
  ///
  /// The full trace (every message and what it carried) is kept only when the run has an
  /// anomaly to explain: the run is judged first without it, and run again, keeping it, only
  /// then. Runs are deterministic, so the second is the first again; an explanation of a run
  /// without anomalies reads nothing of the trace, so it costs what `sim-cli run` does, not a
  /// copy of every message.
  public static func run(
    _ file: ScenarioFile, app: AppUnderTest? = nil, seed: UInt64? = nil, policy: PolicySpec? = nil
  ) -> (text: String, result: ScenarioRunner.Result) {
    func run(keepingEvents keep: Bool) -> ScenarioRunner.Result {
      app.map { ScenarioRunner.run(file, app: $0, seed: seed, keepEvents: keep) }
        ?? ScenarioRunner.run(file, seed: seed, policy: policy, keepEvents: keep)
    }
    let judged = run(keepingEvents: false)
    guard !judged.report.anomalies.isEmpty else { return (Explainer(judged, traceKept: true).text(), judged) }
    let kept = run(keepingEvents: true)
    return (Explainer(kept).text(), kept)
  }
}

/// Builds the text of ``Explanation``.
struct Explainer {
  let history: RunHistory
  let report: RunReport
  let settings: PolicySettings
  var names: Vocabulary { history.names }
  /// Whether the run was of a user's app: its code is the policy, so no preset axis is named.
  var isApp: Bool { report.app != nil }

  /// Whether the run kept its full trace (else the text says that messages are not shown).
  let traceKept: Bool

  /// `traceKept`: say that the run kept its full trace although `result` has none — for a run
  /// without anomalies, whose explanation reads nothing of it (``Explanation/run(_:app:seed:policy:)``).
  init(_ result: ScenarioRunner.Result, traceKept: Bool? = nil) {
    // Without anomalies nothing below reads the messages: they are not gathered.
    history = RunHistory(result, readingEvents: !result.report.anomalies.isEmpty)
    report = result.report
    settings = result.world.config.policy.settings
    self.traceKept = traceKept ?? history.hasEvents
  }

  func text() -> String {
    var out = "\(report.scenario) — policy \(report.policy), seed \(report.seed)\n"
    out += "found \(report.verdict) · \(report.converged ? "converged" : "not converged") · trace \(report.traceHash)\n"
    if let app = report.app {
      out +=
        "app \(app): its code is the policy — the server takes a save only with the current change tag (as for CKSyncEngine), or without one of a record it does not have; what wins a conflict is the app's merge\n"
      if let boundTo = report.boundTo { out += "on \(app)'s schema: \(boundTo)\n" }
    } else {
      out += "policy settings: " + settings.pairs.map { "\($0.key)=\($0.value)" }.joined(separator: " ") + "\n"
    }
    out += "device clocks: \(clocks)\n"
    if !traceKept { out += "(no trace kept: messages are not shown; run with the full trace)\n" }
    if report.anomalies.isEmpty {
      out += "\nNo anomalies: nothing to explain.\n"
    }
    for (k, a) in report.anomalies.enumerated() {
      out += "\n" + section(k + 1, a)
    }
    out += "\nreproduce: \(report.reproduction.replacingFirst("\(ToolName.current) run", with: "\(ToolName.current) explain"))\n"
    return out
  }

  /// `iPad +10m, phone +2s +40ppm` or `all exact`.
  var clocks: String {
    let parts = history.world.config.clocks.enumerated().compactMap { i, c -> String? in
      guard c.skew != .zero || c.driftPPM != 0 else { return nil }
      return names.node(i) + " " + skewText(c)
    }
    return parts.isEmpty ? "all exact" : parts.joined(separator: ", ")
  }

  func skewText(_ c: DeviceClock) -> String {
    var p = "\(c.skew.nanoseconds >= 0 ? "+" : "")\(c.skew)"
    if c.driftPPM != 0 { p += " \(c.driftPPM > 0 ? "+" : "")\(c.driftPPM)ppm" }
    return p
  }

  // MARK: One anomaly

  func section(_ number: Int, _ a: Anomaly) -> String {
    let place = a.place
    var out = "\(number). \(a.kind.rawValue)\(a.kind.isViolation ? "" : " (informational)")\(place.isEmpty ? "" : " · " + place)\n"
    out += indent(a.explanation, 3)
    let involved = a.intents.compactMap { history.intent($0) }
    if !involved.isEmpty {
      out += "\n   Intents\n"
      for i in involved { out += "     " + intentLine(i) + "\n" }
      if let (x, y) = a.pair(in: history) { out += indent(causality(x, y), 5) }
    }
    if let key = a.record?.key {
      let lines = story(of: key, anomaly: a)
      if !lines.isEmpty {
        out += "\n   What happened to \(names.record(key)), in order\n"
        let width = lines.map(\.time.count).max() ?? 0
        for l in lines { out += "     " + l.time.padding(to: width) + "  " + l.text + "\n" }
      }
    }
    let reasons = why(a)
    if !reasons.isEmpty {
      out += "\n   Why\n"
      for r in reasons { out += indent("• " + r, 5, hanging: 2) }
    }
    return out
  }

  /// `i2  iPad   at 3.000s (its clock 3.000s, offline)  append " (margin…" to n1.body`
  func intentLine(_ i: Intent) -> String {
    var notes = ["its clock read \(clockTime(i.deviceTime))"]
    if isOffline(Int(i.device), at: i.trueTime) { notes.append("offline") }
    if let why = i.ignored { notes.append("ignored: \(why)") }
    return "i\(i.id) by \(names.node(Int(i.device))) at \(time(i.trueTime)) (\(notes.joined(separator: ", "))): \(names.what(i))"
  }

  /// Which of two intents had seen the other, from what their devices had received.
  func causality(_ a: Intent, _ b: Intent) -> String {
    let (first, second) = a.trueTime <= b.trueTime ? (a, b) : (b, a)
    if first.happenedBefore(second) {
      return
        "i\(first.id) happened before i\(second.id): when \(names.node(Int(second.device))) made i\(second.id) it had received \(seen(second)), i\(first.id) among them."
    }
    if second.happenedBefore(first) {
      return "i\(second.id) happened before i\(first.id)."
    }
    return
      "i\(a.id) and i\(b.id) were concurrent: when \(names.node(Int(second.device))) made i\(second.id) it had received \(seen(second)), not i\(first.id); "
      + "when \(names.node(Int(first.device))) made i\(first.id) it had received \(seen(first))."
  }

  /// `i1, i3 on n1` or `no other intent on n1`: what a device had received of the record when it
  /// made `i`.
  func seen(_ i: Intent) -> String {
    let r = names.record(i.record)
    let known = history.intents.filter { $0.id != i.id && $0.happenedBefore(i) }.map { "i\($0.id)" }
    return known.isEmpty ? "no other intent on \(r)" : "\(known.joined(separator: ", ")) on \(r)"
  }

  /// A moment for people: `10.100s` (to the millisecond) below an hour, else `40d 1m 0.1s`.
  func time(_ t: VirtualTime) -> String {
    let ns = t.nanoseconds
    guard ns >= 0, ns < 3_600_000_000_000 else { return TimeText.moment(ns) }
    let ms = String(ns / 1_000_000 % 1_000)
    return "\(ns / 1_000_000_000).\(String(repeating: "0", count: 3 - ms.count) + ms)s"
  }

  func isOffline(_ node: Int, at t: VirtualTime) -> Bool {
    history.windows.contains { $0.node == node && ($0.kind == .offline || $0.kind == .down) && $0.start <= t && t < $0.end }
  }

  /// Wraps `text` at 100 columns, indented.
  func indent(_ text: String, _ n: Int, hanging: Int = 0) -> String {
    let lines = SVGText.wrap(text, columns: 100 - n)
    return lines.enumerated().map { k, l in String(repeating: " ", count: n + (k > 0 ? hanging : 0)) + l + "\n" }.joined()
  }
}

extension String {
  func padding(to width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }

  func replacingFirst(_ target: String, with replacement: String) -> String {
    guard let r = firstRange(of: target) else { return self }
    var copy = self
    copy.replaceSubrange(r, with: replacement)
    return copy
  }
}

extension Explainer {
  /// A device clock reading, which may be negative: `601.000s`, `-2.000s`.
  func clockTime(_ t: VirtualTime) -> String { t.nanoseconds < 0 ? "-" + time(VirtualTime(nanoseconds: -t.nanoseconds)) : time(t) }
}
