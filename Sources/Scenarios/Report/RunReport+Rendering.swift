@_spi(Kernel) import Simulator

extension Anomaly {
  package var json: JSONValue {
    var o: [String: JSONValue] = [
      "kind": .string(kind.rawValue),
      "record": record.map { .string($0.name) } ?? .null,
      "intents": .array(intents.map { .string($0.description) }),
      "devices": .array(devices.map { .string($0.name) }),
      "at": at.map { .string($0.description) } ?? .null,
      "explanation": .string(explanation),
    ]
    if let field { o["field"] = .string(field.name) }
    return .object(o)
  }
}

extension RunReport {
  /// The JSON form of `cli.md` (keys sorted by the writer, every count key present).
  package var json: JSONValue {
    var counts: [String: JSONValue] = [:]
    for (k, n) in self.counts { counts[k.rawValue] = .int(Int64(n)) }
    var o: [String: JSONValue] = [
      "scenario": .string(scenario),
      "policy": .string(policy),
      "seed": .uint(seed),
      "traceHash": .string(traceHash),
      "converged": .bool(converged),
      "passed": .bool(passed),
      "counts": .object(counts),
      "anomalies": .array(anomalies.map(\.json)),
      "expectations": .array(
        expectations.map { e in
          var o: [String: JSONValue] = ["line": .int(Int64(e.line)), "text": .string(e.text), "passed": .bool(e.passed)]
          if let actual = e.actual { o["actual"] = .string(actual) }
          return .object(o)
        }),
      "stats": [
        "events": .int(Int64(stats.events)),
        "messages": .int(Int64(stats.messages)),
        "simulatedTime": .string(stats.simulatedTime.description),
        "intents": .int(Int64(stats.intents)),
        "ignoredIntents": .int(Int64(stats.ignoredIntents)),
        "convergedAfter": stats.convergedAfter.map { .string((VirtualTime.zero + $0).description) } ?? .null,
      ],
      "ignored": .array(ignored.map { .string($0) }),
      "reproduction": .string(reproduction),
    ]
    // With an app: why its code could not be run, if it could not (absent for a policy, so
    // that a policy's report is what it was).
    if app != nil {
      o["appErrors"] = .array(appErrors.map { .string($0) })
      o["notSimulated"] = .array(notSimulated.map { .string($0) })
      if let counts = appIntents {
        o["appIntents"] = [
          "applied": .int(Int64(counts.applied)), "refusedAsExpected": .int(Int64(counts.refusedAsExpected)),
          "refused": .array(counts.refused.map { .string($0) }), "notSimulated": .int(Int64(counts.notSimulated)),
        ]
      }
      o["boundTo"] = boundTo.map { .string($0) } ?? .null
    }
    return .object(o)
  }

  /// The report as `sim-cli run --format json` prints it: one line, keys sorted, every count
  /// key present.
  public var jsonText: String { json.serialized() }

  /// What was found: `no violations (1 informational)` or `2 violations (1 lost-edit, 1 resurrection)`.
  public var verdict: String {
    let v = violations
    let info = anomalies.count - v.count
    let infoText = info > 0 ? " (\(info) informational)" : ""
    if v.isEmpty { return "no violations\(infoText)" }
    var kinds: [String] = []
    for k in AnomalyKind.allCases where k.isViolation {
      let n = v.filter { $0.kind == k }.count
      if n > 0 { kinds.append("\(n) \(k.rawValue)") }
    }
    return "\(v.count) violation\(v.count == 1 ? "" : "s") (\(kinds.joined(separator: ", ")))" + (info > 0 ? " and \(info) informational" : "")
  }

  /// `✓ expectations held` or `✗ 2 of 3 expectations failed`.
  public var outcome: String {
    let failed = expectations.filter { !$0.passed }.count
    return failed == 0
      ? "✓ expectations held"
      : "✗ \(failed) of \(expectations.count) expectation\(expectations.count == 1 ? "" : "s") failed"
  }

  /// The text report: verdict, anomalies grouped by kind, expectations, figures, reproduction.
  public var text: String {
    var out = "\(scenario) — policy \(policy), seed \(seed)\n"
    if let boundTo { out += "on \(app ?? "the app")'s schema: \(boundTo)\n" }
    out += "\(outcome) — found \(verdict) · \(converged ? "converged" : "not converged") · trace \(traceHash)\n"
    for kind in AnomalyKind.allCases {
      let group = anomalies.filter { $0.kind == kind }
      guard !group.isEmpty else { continue }
      out += "\n\(kind.rawValue) (\(group.count)\(kind.isViolation ? "" : ", informational"))\n"
      for a in group {
        let place = a.place
        out += "  • \(place.isEmpty ? "" : place + ": ")\(a.explanation)\n"
      }
    }
    if !ignored.isEmpty {
      out += "\nignored intents (no effect; not judged)\n"
      for i in ignored { out += "  • \(i)\n" }
    }
    if !notSimulated.isEmpty {
      out += "\nnot simulated for the app (ignored)\n"
      for i in notSimulated { out += "  • \(i)\n" }
    }
    out += "\nexpectations\n"
    for e in expectations {
      let line = e.line > 0 ? "line \(e.line)" : "implied"
      out += "  \(e.passed ? "✓" : "✗") \(line): \(e.text)\(e.actual.map { " — found \($0)" } ?? "")\n"
    }
    if let counts = appIntents { out += "\nthe app's intents: \(counts.summary)\n" }
    out +=
      "\n\(stats.intents) intents · \(stats.events) events · \(stats.messages) messages · \(stats.simulatedTime) simulated · "
      + (stats.convergedAfter.map { "sync quiet \(VirtualTime.zero + $0) into settle" } ?? "sync never quiet in settle") + "\n"
    if let file = fileToSave {
      let how = if case .text = origin { "the text it was parsed from" } else { "ScenarioFile.rendered()" }
      out += "reproduce: save the scenario as \(file) (\(how)), then: \(reproduction)\n"
    } else if customPolicyType != nil {
      out += "reproduce in Swift (sim-cli cannot load the policy \(policy)): \(reproduction)\n"
    } else {
      out += "reproduce: \(reproduction)\n"
    }
    return out
  }
}
