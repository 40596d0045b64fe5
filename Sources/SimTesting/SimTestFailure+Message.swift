import Foundation

extension SimTestFailure {
  /// The message a test failure shows, the same in Swift Testing and XCTest: a headline, what
  /// was expected and found, each anomaly explained, the exact reproduction, and what to do.
  public var message: String {
    switch self {
    case .violations(let report): Self._violations(report)
    case .expectationsFailed(let report): Self._expectations(report)
    case .unexpectedViolations(let report, let expected): Self._unexpected(report, expected)
    case .fuzzFailed(let summary): Self._fuzz(summary)
    case .scenarioNotLoaded(let name, let error): Self._notLoaded(name, error)
    case .invalidPolicy(let spec, let error): Self._invalidPolicy(spec, error)
    case .unusableWorkload(let name, let reason):
      "scenario \(swiftStringLiteral(name)) cannot shape a fuzz workload: \(reason).\n"
    case .invalidEnvironment(let variable, let value, let reason):
      "\(variable)=\(shellQuote(value)) in the environment cannot be used: \(reason).\n"
    case .notDeterministic(let check, let app, let scenario, let seed):
      "\(app) on \(scenario), seed \(seed):\n\(check.text.hasSuffix("\n") ? check.text : check.text + "\n")"
        + "reproduce: sim-cli run \(scenario) --seed \(seed) --app \(app) --check-determinism (it runs the second time in another process)\n"
    }
  }

  /// `1 lost-edit, 2 resurrection`, in report order.
  static func _kindCounts(_ anomalies: [Anomaly]) -> String {
    var parts: [String] = []
    for kind in AnomalyKind.allCases {
      let n = anomalies.filter { $0.kind == kind }.count
      if n > 0 { parts.append("\(n) \(kind.rawValue)") }
    }
    return parts.joined(separator: ", ")
  }

  static func _kinds(_ anomalies: [Anomaly]) -> [AnomalyKind] {
    AnomalyKind.allCases.filter { k in anomalies.contains { $0.kind == k } }
  }

  /// The anomalies grouped by kind, each with its place, explanation and the intents involved;
  /// at most `perKind` of each kind, so that every kind is shown.
  static func _anomalies(_ anomalies: [Anomaly], perKind: Int = .max) -> String {
    var out = ""
    for kind in _kinds(anomalies) {
      let group = anomalies.filter { $0.kind == kind }
      out += "\(kind.rawValue) (\(group.count))\n"
      for a in group.prefix(perKind) {
        let place = a.place
        out += "  • \(place.isEmpty ? "" : place + ": ")\(a.explanation)\n"
        var facts: [String] = []
        if !a.intents.isEmpty { facts.append("intents \(a.intents.map(\.description).joined(separator: ", "))") }
        if !a.devices.isEmpty { facts.append("devices \(a.devices.map(\.name).joined(separator: ", "))") }
        if let at = a.at { facts.append("at \(at)") }
        if !facts.isEmpty { out += "    \(facts.joined(separator: " · "))\n" }
      }
      if group.count > perKind { out += "  … and \(group.count - perKind) more \(kind.rawValue)\n" }
    }
    return out
  }

  /// Command lines with their comments aligned.
  static func _commands(_ lines: [(command: String, comment: String)]) -> String {
    let width = lines.map(\.command.count).max() ?? 0
    return lines.map { "  " + $0.command + String(repeating: " ", count: width - $0.command.count) + "   # " + $0.comment + "\n" }.joined()
  }

  static func _typeName(_ policy: any SyncPolicy) -> String { String(describing: type(of: policy)) }

  // MARK: A run

  /// `name under policy (seed N)`.
  static func _run(_ report: RunReport) -> String { "\(report.scenario) under \(report.policy) (seed \(report.seed))" }

  static func _violations(_ report: RunReport) -> String {
    let violations = report.violations
    var out = "\(_run(report)) lost data: \(_kindCounts(violations))\n\n"
    out += "  − expected: no violations\n"
    out += "  + actual:   \(report.verdict)\(report.converged ? "" : ", not converged")\n\n"
    out += _found(report)
    out += _reproduce(report, call: "expectNoViolations")
    out += "\n" + _advice(report)
    return out
  }

  static func _expectations(_ report: RunReport) -> String {
    let failed = report.expectations.filter { !$0.passed }
    let named = failed.map { "`\($0.text)`" }
    let headline =
      failed.count == 1
      ? "\(named[0]) failed" : "\(failed.count) of \(report.expectations.count) expectations failed: \(named.joined(separator: ", "))"
    var out = "\(_run(report)): \(headline)\n\n"
    for e in report.expectations {
      let place = e.line > 0 ? "line \(e.line)" : "implied"
      out += "  \(e.passed ? "✓" : "✗") \(place): \(e.text)\(e.actual.map { " — found \($0)" } ?? "")\n"
    }
    out += "\nfound \(report.verdict) · \(report.converged ? "converged" : "not converged")\n"
    if !report.anomalies.isEmpty { out += "\n" + _found(report) }
    out += _reproduce(report, call: "expectScenarioHolds")
    if !report.violations.isEmpty {
      out += "\n" + _advice(report)
    }
    return out
  }

  /// What usually causes the report's violations: the policy axes, or for a user's app, its code.
  static func _advice(_ report: RunReport) -> String {
    if report.app != nil { return "no policy axis is to blame: your app's delegate lost it (the explanations above say how)\n" }
    return ViolationAdvice.render(_kinds(report.violations), settings: _settings(report), isCustom: report.customPolicyType != nil)
  }

  static func _unexpected(_ report: RunReport, _ expected: [AnomalyKind: Int]) -> String {
    let wanted = AnomalyKind.allCases.filter { $0.isViolation && (expected[$0] ?? 0) > 0 }.map { "\(expected[$0]!) \($0.rawValue)" }
    var out = "\(_run(report)) did not lose what the test expects\n\n"
    out += "  − expected: \(wanted.isEmpty ? "no violations" : wanted.joined(separator: ", ") + " and no other violation")\n"
    out += "  + actual:   \(report.verdict)\(report.converged ? "" : ", not converged")\n"
    let differing = AnomalyKind.allCases.filter { $0.isViolation && report.count($0) != (expected[$0] ?? 0) }
    out +=
      "  differs in: \(differing.map { "\($0.rawValue) (\(expected[$0] ?? 0) expected, \(report.count($0)) found)" }.joined(separator: ", "))\n\n"
    if !report.anomalies.isEmpty { out += _found(report) }
    out += _reproduce(report, call: "expectViolations")
    return out
  }

  /// The anomalies, violations first, then the informational ones by count.
  static func _found(_ report: RunReport) -> String {
    var out = _anomalies(report.violations)
    let informational = report.anomalies.filter { !$0.kind.isViolation }
    if !informational.isEmpty {
      out += "\(out.isEmpty ? "" : "\n")informational, not failures: \(_kindCounts(informational))\n"
    }
    return out
  }

  /// The axes the run's policy has.
  static func _settings(_ report: RunReport) -> PolicySettings? { report.settings }

  /// How to replay the run: the `sim-cli` command, or the Swift call when the policy is your own;
  /// first, for a scenario that is not a file, how to save it as one.
  static func _reproduce(_ report: RunReport, call: String) -> String {
    var out = "\nreproduce:\n"
    var source = report.source
    if let file = report.fileToSave {
      source = file
      if case .text(let text) = report.origin {
        out += "  the scenario is text in the test, not a file; save it as \(file), without the 4-space indent:\n\n"
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) { out += line.isEmpty ? "\n" : "    \(line)\n" }
        out += "\n  then:\n"
      } else {
        out += "  save the scenario (ScenarioFile.rendered()) as \(file), then:\n"
      }
    }
    let scenario = "scenario: \(swiftStringLiteral(source)), seed: \(report.seed)"
    if let app = report.app {
      out += "  \(report.reproduction)   (with a sim-cli built with your apps: docs/your-engine.md)\n"
      out += "  \(call)(app: \(app).self, \(call == "expectViolations" ? "…, " : "")\(scenario))\n"
    } else if let type = report.customPolicyType {
      out += "  \(report.policy) is your own policy, which sim-cli cannot load; replay the run in Swift:\n"
      out += "  \(call)(\(call == "expectViolations" ? "…, " : "")\(scenario), policy: \(type)())\n"
    } else if (try? PolicySpec.parse(report.policy).get()) == nil {
      out += "  \(report.policy) is not a preset spec, so sim-cli cannot load it; replay the run in Swift with your policy:\n"
      out += "  \(call)(\(scenario), policy: …)\n"
    } else {
      out += "  \(report.reproduction)\n"
    }
    return out
  }

  // MARK: A fuzz campaign

  static func _fuzz(_ s: FuzzSummary) -> String {
    guard let first = s.failures.first else { return "fuzzing \(s.policyName) passed" }
    let seed = first.record.seed
    let workload = s.shape.base.map { "workload \($0.name)" } ?? "the default workload"
    let what =
      first.violations.isEmpty
      ? "the app refused intents of its own schema (a run whose changes the app refuses tests nothing)"
      : "lost data: \(_kindCounts(first.violations))" + (first.appProblems.isEmpty ? "" : "; and the app refused intents")
    var out = "fuzzing \(s.policyName) on \(workload): seed \(seed) \(what)\n\n"
    out += "  − expected: no violations on seeds \(s.seeds.lowerBound)...\(s.seeds.upperBound)\n"
    if s.stoppedAtFirstFailure {
      let before = s.seedsRun - 1
      let passed = before == 0 ? "it was the first seed" : "\(before) seed\(before == 1 ? "" : "s") passed before it"
      out += "  + actual:   seed \(seed) failed (\(passed); stopped at the first failure)\n\n"
    } else {
      let seeds = s.failingSeeds.prefix(10).map(String.init).joined(separator: ", ") + (s.failures.count > 10 ? ", …" : "")
      out += "  + actual:   \(s.failures.count) of \(s.seedsRun) seeds failed: \(seeds) (the first is shown)\n\n"
    }
    out += "profile of seed \(seed): \(first.profile)\n\n"
    out += _anomalies(first.violations, perKind: 3)
    if !first.appProblems.isEmpty {
      out += "the app's code\n"
      for problem in first.appProblems.prefix(5) { out += "  • \(problem)\n" }
      if first.appProblems.count > 5 { out += "  … and \(first.appProblems.count - 5) more\n" }
    }

    let minimal: String?
    if let shrunk = first.shrunk {
      minimal = shrunk.file.source
      out +=
        "\nminimal scenario (\(shrunk.file.timeline.count) timeline line\(shrunk.file.timeline.count == 1 ? "" : "s"), keeps \(shrunk.kind.rawValue)); save it as \(shrunk.file.source), without the 4-space indent:\n\n"
      for line in shrunk.text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
        out += line.isEmpty ? "\n" : "    \(line)\n"
      }
    } else {
      minimal = nil
      out +=
        first.violations.isEmpty
        ? "\n(seed \(seed) is not shrunk: no violation to keep; replay the seed)\n"
        : "\n(seed \(seed) could not be shrunk: its written scenario did not fail the same way within the shrink budget; replay the seed instead)\n"
    }

    out += "\nreproduce:\n"
    let defaultShape = WorkloadShape()
    let cliShape = s.shape.intents == defaultShape.intents && (s.shape.base != nil || s.shape.deviceCounts == defaultShape.deviceCounts)
    var commands: [(command: String, comment: String)] = []
    if let app = s.app {
      if let minimal {
        commands.append(
          (
            "sim-cli run \(shellQuote(minimal)) --app \(shellQuote(app.name))",
            "the minimal scenario, once saved, with a sim-cli built with your apps"
          ))
        commands.append(("sim-cli explain \(shellQuote(minimal)) --app \(shellQuote(app.name))", "the story of each anomaly"))
      }
      if cliShape {
        let scenario = s.shape.base.map { " --scenario \(shellQuote($0.source))" } ?? ""
        commands.append(("sim-cli fuzz --seeds \(seed)..\(seed) --app \(shellQuote(app.name))\(scenario)", "the original seed"))
      }
    } else if let custom = s.customPolicy {
      let type = _typeName(custom)
      out +=
        "  \(custom.name) is your own policy, which sim-cli cannot load; replay it in Swift (XCTest: XCTAssertNoViolations, XCTAssertFuzzPasses):\n"
      if let minimal {
        commands.append(("expectNoViolations(scenario: \(swiftStringLiteral(minimal)), policy: \(type)())", "the minimal scenario, once saved"))
      }
    } else {
      if let minimal { commands.append(("sim-cli run \(shellQuote(minimal))", "the minimal scenario, once saved")) }
      if cliShape {
        let scenario = s.shape.base.map { " --scenario \(shellQuote($0.source))" } ?? ""
        commands.append(("sim-cli fuzz --seeds \(seed)..\(seed) --policy \(shellQuote(s.policy.description))\(scenario)", "the original seed"))
      }
    }
    // This very test, on the failing seed alone.
    let filter = s.testName.map { " --filter \(shellQuote($0))" } ?? ""
    commands.append(("SIM_FUZZ_SEED=\(seed) swift test\(filter)", "this test, on seed \(seed) only"))
    out += _commands(commands)
    if let variable = s.replayedFrom {
      out += "  (the seeds came from \(variable) in the environment, not from the test)\n"
    }
    if s.app != nil {
      out += "\nno policy axis is to blame: your app's delegate lost it (the explanations above say how)\n"
    } else {
      out += "\n" + ViolationAdvice.render(_kinds(first.violations), settings: s.settings, isCustom: s.customPolicy != nil)
    }
    return out
  }

  // MARK: Setup errors

  static func _notLoaded(_ name: String, _ error: Scenario.LoadError) -> String {
    switch error {
    case .invalid:
      return
        "scenario \(swiftStringLiteral(name)) does not parse:\n\n\(error.description)\n\nfix the lines above; `sim-cli check \(shellQuote(name))` reports the same diagnostics.\n"
    case .notFound, .fileNotFound, .unreadable:
      return
        "could not load scenario \(swiftStringLiteral(name)): \(error.description)\n\npass the name of a file in scenarios/ (`sim-cli list` shows them) or a path ending in .scenario.\n"
    }
  }

  static func _invalidPolicy(_ spec: String, _ error: PolicySpec.ParseError) -> String {
    var out = "invalid policy \(swiftStringLiteral(spec)): \(error.message)\n\n"
    out += "  \(spec)\n  \(String(repeating: " ", count: max(0, error.offset)))^\n\n"
    out += "a policy is a preset and key=value overrides, e.g. \"field-lww-hlc delete=tombstone\"; `sim-cli policies` lists them.\n"
    return out
  }
}
