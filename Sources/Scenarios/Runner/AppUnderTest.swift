import Replica
@_spi(Kernel) import Simulator

/// A user's app and its sync engine, run on every device of a scenario or fuzz seed instead of
/// the engine of a preset. Made by the `SimSyncEngine` product (`AppUnderTest(NotesApp.self)`);
/// the runner, the fuzzer, the shrinker and `sim-cli` take one where they take a policy.
///
/// The server behaves as CloudKit does for `CKSyncEngine` (saves conditional on the change tag,
/// tombstones), so scenarios are judged under the settings of `sync-engine-merge`; reports and
/// fuzz records name the policy `app NAME`.
public struct AppUnderTest: Sendable {
  /// The app's name in reports (`app NotesApp`) and on the command line (`--app NotesApp`).
  public let name: String
  /// The record types and fields the app stores, when it states them (nil: any types — a
  /// scenario runs on its own schema, and the fuzzer draws notes): the fuzzer draws the app's
  /// workload from it, and a scenario on another schema is bound to it (its types and fields
  /// mapped by the roles they play).
  public let schema: Schema?
  /// Why the app's stated schema could not be read, if it could not: nothing runs, and the
  /// helpers and `sim-cli` say this.
  public let schemaProblem: String?
  /// Whether the app may name a record again after it was deleted (names from content): the
  /// fuzzer then follows some deletes with a create of the same name, and a lesson that does so
  /// applies to it.
  public let reusesNames: Bool
  /// Whether the app syncs what other accounts share with its user (a second engine, for the
  /// shared database): only such an app runs a scenario that shares, or `fuzz --sharing`.
  public let sharesRecords: Bool
  /// Per run: the drivers of that run's devices (they share what the run needs to share).
  package let drivers: @Sendable (AppRunContext) -> (Int) -> any AppDriver

  /// An app under test called `name`, whose devices are driven by `drivers(run)(device)`.
  package init(
    name: String, schema: Schema? = nil, schemaProblem: String? = nil, reusesNames: Bool = true, sharesRecords: Bool = false,
    drivers: @escaping @Sendable (AppRunContext) -> (Int) -> any AppDriver
  ) {
    self.name = name
    self.sharesRecords = sharesRecords
    self.schema = schema
    self.schemaProblem = schemaProblem
    self.reusesNames = reusesNames
    self.drivers = drivers
  }

  /// A scenario made to run on the app: as written when the app takes any types, or when the
  /// scenario is on the app's schema; else bound to the app's schema (its types and fields
  /// mapped by the roles they play), or the reason it cannot be — including an app whose stated
  /// schema could not be read.
  package func bind(_ file: ScenarioFile) -> Result<LessonBinding, LessonMismatch> {
    if let schemaProblem { return .failure(LessonMismatch(message: "\(name)'s schema cannot be used: \(schemaProblem)")) }
    // (An app of any types runs the scenario on its own schema; a record made again under a
    // deleted one's name still needs an app that reuses names.)
    return file.bound(to: schema ?? file.schema, appName: name, reusesNames: reusesNames)
  }

  /// The policy a user's app is judged under: the server and oracle settings of a
  /// `CKSyncEngine` app (`sync-engine-merge`).
  public static let judgedAs: PolicySpec = {
    guard case .success(let spec) = PolicySpec.parse("sync-engine-merge") else { preconditionFailure("sync-engine-merge is a preset") }
    return spec
  }()

  /// The policy name reports and fuzz records give a run of this app.
  public var policyName: String { "app \(name)" }
}

/// What the drivers of one run of an app share: the run's plan and seed (the devices' generators
/// are drawn from it), and, when the run is checked for determinism, the log of what the app did.
package struct AppRunContext {
  package let plan: ScenarioRunner.Plan
  package let seed: UInt64
  package let behaviour: AppBehaviourLog?
}

/// What a user's app did, step by step, in one run: after every call into its code (an intent,
/// an event, a batch), what it showed, what it had pending, what it sent and what its disk held.
/// Two runs of one seed must give the same steps; the first that differs is where the app's code
/// read something the simulator does not control (the wall clock, `UUID()`, a system random
/// generator, the iteration order of a `Set` or `Dictionary`).
package final class AppBehaviourLog: @unchecked Sendable {
  package struct Step: Equatable, Sendable {
    /// True time of the step.
    package var time: VirtualTime
    package var device: String
    /// What the simulator asked of the app (`intent i3`, `push reply`, `kill`, …).
    package var input: String
    /// What the app showed, had pending and sent, after the step.
    package var outcome: String
    /// What its disk held after the step: the number of files and a digest of their bytes.
    package var disk: String
    package init(time: VirtualTime, device: String, input: String, outcome: String, disk: String) {
      self.time = time
      self.device = device
      self.input = input
      self.outcome = outcome
      self.disk = disk
    }
  }
  package var steps: [Step] = []
  package init() {}
}

/// Whether a user's app behaves the same in two runs of one seed, and if not, where it first
/// differed (``ScenarioRunner/checkDeterminism(_:app:seed:)``).
public struct DeterminismCheck: Sendable, Equatable {
  /// The steps the first run made (calls into the app's code, each followed by what it showed).
  public var steps: Int
  /// The two runs' trace hashes.
  public var traceHashes: (String, String)
  /// The first step where the runs differ, or nil when they agree.
  public var firstDifference: Difference?
  /// Whether the runs agree step for step and hash for hash.
  public var deterministic: Bool { firstDifference == nil && traceHashes.0 == traceHashes.1 }

  /// A step the two runs made differently.
  public struct Difference: Sendable, Equatable {
    /// The step's number, from 1.
    public var step: Int
    /// When, in simulated time, in seconds (`"4.300s"`).
    public var time: String
    /// The device whose app behaved differently.
    public var device: String
    /// What the simulator asked of the app there (`intent i3`, `fetch reply`, `push reply`, …).
    public var input: String
    /// What the app showed, had pending, sent and stored after it, in each run ("no step" when
    /// one run ended first).
    public var first: String
    /// The same, in the second run.
    public var second: String
    /// Whether only the disk's bytes differ: the app showed, kept pending and sent the same.
    public var onlyTheDisk: Bool
  }

  public static func == (a: Self, b: Self) -> Bool {
    a.steps == b.steps && a.traceHashes == b.traceHashes && a.firstDifference == b.firstDifference
  }

  /// The verdict as `sim-cli` prints it.
  public var text: String {
    guard let d = firstDifference else {
      if traceHashes.0 != traceHashes.1 {
        return "✗ the app behaved the same in every step, but the traces differ (\(traceHashes.0) vs \(traceHashes.1))"
      }
      return "✓ deterministic: two runs made the same \(steps) steps · trace \(traceHashes.0)"
    }
    if d.onlyTheDisk {
      return """
        ✗ not deterministic: at step \(d.step), \(d.device) at \(d.time), after \(d.input), the app wrote other bytes to its disk,
        though it showed, kept pending and sent the same:
          first run:  \(d.first)
          second run: \(d.second)
        An encoder that writes a Dictionary or Set in its iteration order does this (JSONEncoder without
        .sortedKeys; a Set encodes in hash order): what the app reads back after a kill may then differ too.
        """
    }
    return """
      ✗ not deterministic: the app first behaved differently at step \(d.step), \(d.device) at \(d.time), after \(d.input):
        first run:  \(d.first)
        second run: \(d.second)
      Something the simulator does not control reached the app's code there: Date() instead of SimDevice.now,
      UUID() or a random generator instead of SimDevice.random, or the order of a Set or Dictionary.
      """
  }
}

extension ScenarioRunner {
  /// Runs `file` with `app` twice, with the same seed, and compares what the app did after
  /// every call into its code: what it showed, had pending, sent and wrote to disk. The first
  /// step that differs is where the app read something the simulator does not control.
  ///
  /// Both runs are in this process, where Swift seeds hashing once, so a `Set` or `Dictionary`
  /// may iterate in the same order in both (not always: copies and regrowth reorder them);
  /// `sim-cli run --app NAME --check-determinism` runs the second in another process.
  ///
  ///     let check = ScenarioRunner.checkDeterminism(file, app: AppUnderTest(NotesApp.self))
  ///     #expect(check.deterministic, "\(check.text)")
  public static func checkDeterminism(_ file: ScenarioFile, app: AppUnderTest, seed: UInt64? = nil) -> DeterminismCheck {
    let (a, hashA) = behaviour(of: file, app: app, seed: seed)
    let (b, hashB) = behaviour(of: file, app: app, seed: seed)
    return compare(a, hashA, b, hashB)
  }

  /// One run's steps and trace hash.
  package static func behaviour(of file: ScenarioFile, app: AppUnderTest, seed: UInt64?) -> ([AppBehaviourLog.Step], String) {
    let log = AppBehaviourLog()
    let bound = (try? app.bind(file).get())?.file ?? file
    let report = _run(prepare(bound), seed: seed, spec: AppUnderTest.judgedAs, custom: nil, app: app, behaviour: log).report
    return (log.steps, report.traceHash)
  }

  /// Two runs' steps and hashes, compared.
  package static func compare(_ a: [AppBehaviourLog.Step], _ hashA: String, _ b: [AppBehaviourLog.Step], _ hashB: String) -> DeterminismCheck {
    var difference: DeterminismCheck.Difference?
    for i in 0..<max(a.count, b.count) {
      let x = i < a.count ? a[i] : nil
      let y = i < b.count ? b[i] : nil
      guard x != y, let any = x ?? y else { continue }
      func shown(_ s: AppBehaviourLog.Step?) -> String {
        guard let s else { return "no step: the run had ended" }
        let text = s.outcome + "; disk " + s.disk
        return s.input == any.input && s.device == any.device && s.time == any.time ? text : "(\(s.device) at \(s.time), after \(s.input)) " + text
      }
      var onlyTheDisk = false
      if let x, let y, x.time == y.time, x.device == y.device, x.input == y.input, x.outcome == y.outcome { onlyTheDisk = true }
      difference = .init(
        step: i + 1, time: any.time.description, device: any.device, input: any.input, first: shown(x), second: shown(y), onlyTheDisk: onlyTheDisk)
      break
    }
    return DeterminismCheck(steps: a.count, traceHashes: (hashA, hashB), firstDifference: difference)
  }
}

/// What a user's app's own code cost in the runs made while a meter is bound (`sim-cli bench
/// app`): the wall time spent inside the app's code (its launches, intents, what it shows, its
/// delegate's calls), how many calls that was, and what it wrote to its disk. Unbound (the
/// default), nothing is measured and no clock is read; bound or not, nothing of a run changes
/// (no simulated time passes for any of it).
///
///     let meter = AppCostMeter()
///     AppCostMeter.$current.withValue(meter) { _ = Fuzzer.run(seed: 1, shape: WorkloadShape(), app: app) }
package final class AppCostMeter: @unchecked Sendable {
  /// The meter the runs on this task report to, if any.
  @TaskLocal package static var current: AppCostMeter?
  /// Wall time inside the app's code, in nanoseconds.
  @exclusivity(unchecked) package var appNanoseconds: UInt64 = 0
  /// Calls into the app's code (launches, intents, reads of what it shows, delegate calls).
  @exclusivity(unchecked) package var appCalls = 0
  /// Of those, calls into the engine's delegate (`handleEvent`, `nextRecordZoneChangeBatch`, …).
  @exclusivity(unchecked) package var delegateCalls = 0
  /// Bytes the app wrote to its disk (files whole, rows one by one), and how many writes.
  @exclusivity(unchecked) package var bytesWritten = 0
  @exclusivity(unchecked) package var writes = 0
  /// Calls into the app under way (a call made from inside one is timed with it).
  @exclusivity(unchecked) package var depth = 0
  package init() {}
}
