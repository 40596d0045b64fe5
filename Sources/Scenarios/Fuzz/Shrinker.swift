import Foundation
import Replica
@_spi(Kernel) import Simulator

/// Cuts a failing run down to a minimal scenario that still fails the same way: delta
/// debugging over timeline lines, then devices, faults and values. Every candidate kept is
/// written and parsed back and run as read, so the result is exactly what `sim-cli run` replays.
public enum Shrinker {
  /// A shrunk scenario: the minimal file, the anomaly kind it keeps, and the runs it took.
  public struct Result: Sendable {
    /// The minimal scenario (its `seed` and `policy` lines reproduce the failure).
    public var file: ScenarioFile
    /// The anomaly kind that was kept.
    public var kind: AnomalyKind
    /// Runs spent.
    public var runs: Int
    /// What the minimal scenario's own run reports: its violations, with their sentences (not
    /// the original seed's, which may have lost something else besides).
    public var violations: [Anomaly] = []
    /// Its text, ready to save as a `.scenario` file.
    public var text: String { file.rendered() }
  }

  /// Shrinks `file` run with `seed` under a preset spec (nil: the file's own policy), keeping an
  /// anomaly of `kind` (default: the first violation the original run reports). Returns nil
  /// when the original does not fail. At most `maxRuns` runs are spent.
  public static func shrink(
    _ file: ScenarioFile, seed: UInt64, policy: PolicySpec? = nil, kind: AnomalyKind? = nil, maxRuns: Int = 3_000
  ) -> Result? {
    _shrink(file, seed: seed, policy: policy, custom: nil, kind: kind, maxRuns: maxRuns)
  }

  /// Shrinks `file` run with `seed` under a policy of your own; the minimal scenario's `policy`
  /// line is the spec closest to its settings.
  public static func shrink(
    _ file: ScenarioFile, seed: UInt64, policy: some SyncPolicy, kind: AnomalyKind? = nil, maxRuns: Int = 3_000
  ) -> Result? {
    _shrink(file, seed: seed, policy: PolicySpec.closest(to: policy.settings), custom: policy, kind: kind, maxRuns: maxRuns)
  }

  /// Shrinks `file` run with `seed` and a user's app on every device.
  public static func shrink(_ file: ScenarioFile, seed: UInt64, app: AppUnderTest, kind: AnomalyKind? = nil, maxRuns: Int = 3_000) -> Result? {
    _shrink(file, seed: seed, policy: AppUnderTest.judgedAs, custom: nil, kind: kind, maxRuns: maxRuns, app: app)
  }

  package static func _shrink(
    _ file: ScenarioFile, seed: UInt64, policy: PolicySpec?, custom customPolicy: (any SyncPolicy)?, kind: AnomalyKind?, maxRuns: Int,
    app: AppUnderTest? = nil
  ) -> Result? {
    var base = file
    // A scenario on another schema than the app's is shrunk as bound to it.
    if let app, let bound = try? app.bind(file).get() { base = bound.file }
    base.seed = seed
    if app != nil {
      // A run with an app is judged as the app, whatever the policy line says: the minimal
      // scenario has none (the app is chosen with `--app`).
      base.policy = DeclarationParser.defaultPolicy
      base.policyLocation = nil
    } else if let policy {
      base.policy = policy
    }
    base.expectations = []
    guard maxRuns > 0 else { return nil }
    var runs = 0
    let check = ShrinkerTestSettings.writtenRunCheck
    func runInMemory(_ f: ScenarioFile) -> RunReport {
      ScenarioRunner._run(ScenarioRunner.prepare(f), seed: nil, spec: app != nil ? AppUnderTest.judgedAs : nil, custom: customPolicy, app: app)
        .report
    }
    // Write and read back: only what a file can say counts.
    func runAsWritten(_ f: ScenarioFile) -> RunReport? {
      guard case .success(let parsed) = Scenario.parse(f.rendered(), source: f.source) else { return nil }
      return runInMemory(parsed)
    }
    // The original as read back: what a file says of it, and no more (values it cannot write, a
    // schema's attributes it does not name). Every candidate below is this file cut down or
    // simplified, so a candidate read back from its text is the candidate itself — or no file at
    // all, when a cut left a line naming what is gone (the parser refuses it).
    runs += 1
    guard case .success(var written) = Scenario.parse(base.rendered(), source: base.source) else { return nil }
    let original = runInMemory(written)
    // Keep the most specific kind: divergence only when nothing else explains the failure.
    guard let target = kind ?? (original.violations.first { $0.kind != .divergence } ?? original.violations.first)?.kind,
      original.count(target) > 0
    else { return nil }
    written.origin = base.origin
    check?.note(writesTheSameText: written.rendered() == base.rendered())
    var bestViolations = original.violations
    // A candidate is judged as written, like the original: it fails when its file, read back,
    // fails the same way. Running it as it is in memory first tells the same for every
    // candidate that does not fail there (the same file, or none), and most candidates do not:
    // only one that fails is written out, read back and run again, and that run is the one that
    // counts. (Writing and reading back every candidate was 60% of shrinking.)
    func fails(_ f: ScenarioFile) -> Bool {
      guard runs < maxRuns else { return false }
      runs += 1
      guard runInMemory(f).count(target) > 0 else {
        check?.note(passesAsWritten: runAsWritten(f).map { $0.count(target) == 0 } ?? true)
        return false
      }
      guard let report = runAsWritten(f), report.count(target) > 0 else { return false }
      bestViolations = report.violations
      return true
    }

    var best = written
    var progress = true
    while progress && runs < maxRuns {
      progress = false
      // 1. Timeline lines, in chunks from half down to one (ddmin), cascading to lines that
      //    use a record whose create was removed.
      var chunk = max(1, best.timeline.count / 2)
      while chunk >= 1 && runs < maxRuns {
        var start = 0
        var removedAny = false
        while start < best.timeline.count && runs < maxRuns {
          let end = min(best.timeline.count, start + chunk)
          let candidate = removing(Array(start..<end), from: best)
          if candidate.timeline.count < best.timeline.count, fails(candidate) {
            best = candidate
            removedAny = true
            progress = true
          } else {
            start = end
          }
        }
        if !removedAny { chunk /= 2 }
      }
      // 2. Devices no line uses any more, then devices with their lines.
      for device in best.devices where best.devices.count > 1 {
        let candidate = removingDevice(device, from: best)
        if fails(candidate) {
          best = candidate
          progress = true
        }
      }
      // 3. Faults and settings, one at a time.
      for simplify in simplifications where runs < maxRuns {
        if let candidate = simplify(best), candidate != best, fails(candidate) {
          best = candidate
          progress = true
        }
      }
      // 4. Field values in create lines.
      for index in best.timeline.indices where runs < maxRuns {
        guard case .create(let d, let type, let id, let fields) = best.timeline[index].action, !fields.isEmpty else { continue }
        for drop in fields.indices.reversed() {
          var candidate = best
          guard case .create(_, _, _, let current) = candidate.timeline[index].action, drop < current.count else { continue }
          var fewer = current
          fewer.remove(at: drop)
          candidate.timeline[index].action = .create(device: d, type: type, id: id, fields: fewer)
          if fails(candidate) {
            best = candidate
            progress = true
          }
        }
      }
    }
    best.name = file.name + "-min"
    if let app {
      // A run with an app ignores the policy line (its server and oracle are always set up as
      // `AppUnderTest.judgedAs`); the app itself is chosen on the command line.
      best.about =
        "Shrunk by \(ToolName.current) from \(file.name) (seed \(seed), app \(app.name): run it with --app \(app.name)): it must show no violations, and reports \(target.rawValue)."
    } else {
      best.about =
        "Shrunk by \(ToolName.current) from \(file.name) (seed \(seed), policy \(customPolicy?.name ?? best.policy.description)): it must show no violations, and reports \(target.rawValue)."
    }
    best.expectations = [Expectation(kind: .noViolations, text: "expect no violations", location: SourceLocation(line: 0, column: 0))]
    best.source = best.name + ".scenario"
    return Result(file: best, kind: target, runs: runs, violations: bestViolations)
  }

  /// The file without the given timeline lines, and without lines that use a record whose
  /// create line is gone.
  static func removing(_ indices: [Int], from file: ScenarioFile) -> ScenarioFile {
    var f = file
    let drop = Set(indices)
    f.timeline = file.timeline.enumerated().filter { !drop.contains($0.offset) }.map(\.element)
    var created: Set<String> = []
    for e in f.timeline { if case .create(_, _, let id, _) = e.action { created.insert(id) } }
    f.timeline = f.timeline.compactMap { e in
      var e = e
      switch e.action {
      case .set(_, let id, _), .append(_, let id, _, _), .replace(_, let id, _, _, _), .delete(_, let id):
        return created.contains(id) ? e : nil
      case .reject(let ids, let error, let retryAfter, let duration):
        let kept = ids.filter { created.contains($0) }
        if kept.isEmpty { return nil }
        e.action = .reject(ids: kept, error: error, retryAfter: retryAfter, duration: duration)
        return e
      case .create(let d, let t, let id, let fields):
        let kept = fields.filter { a in
          if case .identifier(let ref) = a.value { return created.contains(ref) }
          return true
        }
        e.action = .create(device: d, type: t, id: id, fields: kept)
        return e
      default:
        return e
      }
    }
    return f
  }

  static func removingDevice(_ device: String, from file: ScenarioFile) -> ScenarioFile {
    var f = file
    f.devices.removeAll { $0 == device }
    f.clocks.removeAll { $0.device == device }
    for a in f.accounts.indices { f.accounts[a].devices.removeAll { $0 == device } }
    var indices: [Int] = []
    for (i, e) in file.timeline.enumerated() {
      switch e.action {
      case .create(let d, _, _, _), .set(let d, _, _), .append(let d, _, _, _), .replace(let d, _, _, _, _), .delete(let d, _),
        .sync(let d), .send(let d), .fetch(let d), .kill(let d), .background(let d, _), .clockJump(let d, _), .deleteZone(let d), .purgeZone(let d),
        .signOut(let d), .sharing(let d, _), .file(let d, _, _, _), .purgeStaging(let d),
        .signIn(let d, _, _):
        if d == device { indices.append(i) }
      default: break
      }
    }
    f = removing(indices, from: f)
    f.timeline = f.timeline.compactMap { e in
      var e = e
      switch e.action {
      case .offline(let ds):
        let rest = ds.filter { $0 != device }
        if rest.isEmpty { return nil }
        e.action = .offline(rest)
      case .online(let ds):
        let rest = ds.filter { $0 != device }
        if rest.isEmpty { return nil }
        e.action = .online(rest)
      default: break
      }
      return e
    }
    return f
  }

  /// One-step simplifications of the world's faults and settings.
  static let simplifications: [@Sendable (ScenarioFile) -> ScenarioFile?] = [
    { f in
      f.loss.isZero
        ? nil
        : {
          var g = f
          g.loss = .never
          return g
        }()
    },
    { f in
      f.duplicate.isZero
        ? nil
        : {
          var g = f
          g.duplicate = .never
          return g
        }()
    },
    { f in
      f.clocks.isEmpty
        ? nil
        : {
          var g = f
          g.clocks = []
          return g
        }()
    },
    { f in
      f.clocks.count < 2
        ? nil
        : {
          var g = f
          g.clocks.removeLast()
          return g
        }()
    },
    { f in
      f.retention == nil
        ? nil
        : {
          var g = f
          g.retention = nil
          return g
        }()
    },
    { f in
      f.push == .off
        ? nil
        : {
          var g = f
          g.push = .off
          return g
        }()
    },
    { f in
      f.autosync == .seconds(1)
        ? nil
        : {
          var g = f
          g.autosync = .seconds(1)
          return g
        }()
    },
    // The server's conditions: each off on its own.
    { f in
      f.server.throttle == nil
        ? nil
        : {
          var g = f
          g.server.throttle = nil
          return g
        }()
    },
    { f in
      !f.server.atomic
        ? nil
        : {
          var g = f
          g.server.atomic = false
          return g
        }()
    },
    { f in
      f.server.quota == nil
        ? nil
        : {
          var g = f
          g.server.quota = nil
          g.server.usedByOthers = 0
          return g
        }()
    },
    { f in
      f.server.maxRecordsPerRequest == ServerConditions().maxRecordsPerRequest
        && f.server.maxBytesPerRequest == ServerConditions().maxBytesPerRequest
        ? nil
        : {
          var g = f
          g.server.maxRecordsPerRequest = ServerConditions().maxRecordsPerRequest
          g.server.maxBytesPerRequest = ServerConditions().maxBytesPerRequest
          return g
        }()
    },
    { f in
      if case .fixed = f.latency { return nil }
      var g = f
      g.latency = .fixed(.milliseconds(100))
      return g
    },
  ]
}

/// A test switch: shrinking in its scope also runs as written every candidate that passed in
/// memory, and counts those that would have failed as written (none may: ``Shrinker`` judges such
/// a candidate by its run in memory).
package enum ShrinkerTestSettings {
  @TaskLocal package static var writtenRunCheck: WrittenRunCheck?
}

/// What ``ShrinkerTestSettings/writtenRunCheck`` found.
package final class WrittenRunCheck: @unchecked Sendable {
  private let lock = NSLock()
  private var _checked = 0
  private var _disagreements = 0
  private var _texts = 0
  private var _textsChanged = 0

  package init() {}

  /// Candidates that passed in memory and were run as written too.
  package var checked: Int { lock.withLock { _checked } }
  /// Of those, the ones that failed as written.
  package var disagreements: Int { lock.withLock { _disagreements } }
  /// Originals read back, and those whose text changed in the round trip.
  package var texts: Int { lock.withLock { _texts } }
  package var textsChanged: Int { lock.withLock { _textsChanged } }

  func note(passesAsWritten: Bool) {
    lock.withLock {
      _checked += 1
      if !passesAsWritten { _disagreements += 1 }
    }
  }

  func note(writesTheSameText: Bool) {
    lock.withLock {
      _texts += 1
      if !writesTheSameText { _textsChanged += 1 }
    }
  }
}
