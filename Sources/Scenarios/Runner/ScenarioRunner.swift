import Replica
@_spi(Kernel) import Simulator

/// Runs a checked scenario: builds the world, plays the timeline, settles, judges, and checks
/// the expectations.
///
///     let file = try Scenario.load("two-device-acceptance")
///     let result = ScenarioRunner.run(file)
///     result.report.violations.isEmpty
public enum ScenarioRunner {
  /// How long after the last timeline entry a standalone or implied `settle` starts.
  public static let settleGrace = SimDuration.minutes(1)

  /// A finished run: the report, and the world it judged (for traces and pictures).
  public struct Result: Sendable {
    /// What the run lost, and whether its expectations held.
    public var report: RunReport
    /// The world after settle: devices, server, intent log, events (for the package's own
    /// tools; a report is what users read).
    package var world: SyncWorld
    /// Record names by key, as the scenario wrote them.
    public var recordNames: [String]
  }

  /// A scenario compiled once for many runs: names resolved, actions timed.
  public struct Plan: Sendable {
    /// The scenario the plan was compiled from.
    public var file: ScenarioFile {
      didSet { context = nil }
    }
    /// Record ids in the order of their `create` lines; a record's key is its index here.
    public var recordNames: [String]
    /// Each record's type (an index into the schema's types), by key: its first create's.
    public var recordTypes: [Int32] = []
    var clocks: [DeviceClock]
    var actions: [(time: VirtualTime, action: WorldAction)]
    var settleAt: VirtualTime
    /// How many of ``actions`` are user intents.
    var intentCount = 0
    /// The merge context of the file's schema, made once for every run of the plan (nil once
    /// ``file`` is changed: each run then makes its own).
    var context: MergeContext?
    /// The shares the timeline names (``ScenarioFile/shareNames``).
    var shareNames: [String] = []
    /// Per share, its root record (nil: zone-wide).
    var shareRoots: [RecordKey?] = []
    /// Per share, the zone it shares (0: the app's zone); per record, its zone (empty: every
    /// record in the app's zone).
    var shareZones: [Int32] = []
    var recordZones: [Int32] = []
  }

  /// Runs `file`, optionally with another seed or policy (a preset spec; nil runs the file's own
  /// `policy` line). `recordObservations` keeps the raw record of the run
  /// (`WorldFacts.observations`) for an independent checker.
  ///
  ///     let report = ScenarioRunner.run(file, policy: try PolicySpec.parse("crdt").get()).report
  public static func run(
    _ file: ScenarioFile, seed: UInt64? = nil, policy: PolicySpec? = nil, keepEvents: Bool = false, recordObservations: Bool = false
  ) -> Result {
    _run(prepare(file), seed: seed, spec: policy, custom: nil, keepEvents: keepEvents, recordObservations: recordObservations)
  }

  /// Runs `file` under a policy of your own (or a `StandardPolicy` value) instead of the
  /// file's `policy` line; reports name it by its `SyncPolicy.name`.
  ///
  ///     let report = ScenarioRunner.run(file, policy: PreferLongerTitle()).report
  public static func run(
    _ file: ScenarioFile, seed: UInt64? = nil, policy: some SyncPolicy, keepEvents: Bool = false, recordObservations: Bool = false
  ) -> Result {
    _run(prepare(file), seed: seed, spec: nil, custom: policy, keepEvents: keepEvents, recordObservations: recordObservations)
  }

  /// Runs a prepared plan (the fast path for many seeds) under a preset spec, or the file's own
  /// policy when nil.
  public static func run(
    _ plan: Plan, seed: UInt64? = nil, policy: PolicySpec? = nil, keepEvents: Bool = false, recordObservations: Bool = false
  ) -> Result {
    _run(plan, seed: seed, spec: policy, custom: nil, keepEvents: keepEvents, recordObservations: recordObservations)
  }

  /// Runs a prepared plan under a policy of your own.
  public static func run(
    _ plan: Plan, seed: UInt64? = nil, policy: some SyncPolicy, keepEvents: Bool = false, recordObservations: Bool = false
  ) -> Result {
    _run(plan, seed: seed, spec: nil, custom: policy, keepEvents: keepEvents, recordObservations: recordObservations)
  }

  /// Runs `file` with a user's app on every device instead of a preset's engine (see
  /// ``AppUnderTest``; `SimSyncEngine` makes one from an app type). Values in the scenario must be
  /// unique per intent: the app stores values, not who wrote them, and the oracle finds the
  /// intent from the value.
  ///
  /// A scenario on another schema than the app's is bound to it first (its types and fields
  /// played by the app's: ``RunReport/boundTo`` says how); one that cannot be is not run, and
  /// the report fails with the reason (the role the app's schema lacks).
  public static func run(_ file: ScenarioFile, app: AppUnderTest, seed: UInt64? = nil, keepEvents: Bool = false) -> Result {
    _runBound(file, app: app) { bound in _run(prepare(bound), seed: seed, spec: AppUnderTest.judgedAs, custom: nil, keepEvents: keepEvents, app: app)
    }
  }

  /// Binds `file` to the app and runs it with `body`; a file that cannot be bound gives a
  /// report that fails with the reason, from a run of nothing.
  package static func _runBound(_ file: ScenarioFile, app: AppUnderTest, _ body: (ScenarioFile) -> Result) -> Result {
    switch app.bind(file) {
    case .success(let binding):
      var result = body(binding.file)
      result.report.boundTo = binding.summary
      return result
    case .failure(let mismatch):
      var empty = file
      empty.timeline = []
      empty.expectations = []
      var result = _run(prepare(empty), seed: nil, spec: AppUnderTest.judgedAs, custom: nil, app: nil)
      result.report.app = app.name
      result.report.policy = app.policyName
      result.report.expectations = [
        ExpectationResult(line: 0, text: "the scenario runs on \(app.name)", passed: false, actual: mismatch.message)
      ]
      return result
    }
  }

  /// The one run behind the overloads: `custom` when given, else `spec`, else the file's policy.
  package static func _run(
    _ plan: Plan, seed: UInt64?, spec policy: PolicySpec?, custom: (any SyncPolicy)?, keepEvents: Bool = false,
    recordObservations: Bool = false, app: AppUnderTest? = nil, behaviour: AppBehaviourLog? = nil
  ) -> Result {
    let file = plan.file
    var (world, syncPolicy, seed) = _world(
      plan, seed: seed, spec: policy, custom: custom, keepEvents: keepEvents, recordObservations: recordObservations, app: app,
      behaviour: behaviour)
    world.run(until: plan.settleAt)
    world.settle()
    var oracle = Oracle(world: world, recordNames: plan.recordNames)
    oracle.judgesAnApp = app != nil
    let anomalies = oracle.judge()
    var report = RunReport(
      file: file, policyName: app?.policyName ?? syncPolicy.name, customPolicyType: custom.flatMap(Self.typeToName),
      settings: syncPolicy.settings, seed: seed, world: world, anomalies: anomalies, converged: oracle.converged,
      recordNames: plan.recordNames)
    report.app = app?.name
    return Result(report: report, world: world, recordNames: plan.recordNames)
  }

  /// A run of `plan` without the judging — the world built, its timeline run, settled — for
  /// `bench scenario`, which times it beside whole runs; the events it handled.
  package static func _runWorldOnly(_ plan: Plan, seed: UInt64) -> Int {
    var world = _world(plan, seed: seed, spec: nil, custom: nil).world
    world.run(until: plan.settleAt)
    world.settle()
    return world.eventsProcessed
  }

  /// The world of a run of `plan`, built and with its timeline scheduled, not yet run (what
  /// ``_run(_:seed:spec:custom:keepEvents:recordObservations:app:behaviour:)`` runs, settles and
  /// judges; `bench scenario` also times it without the judging); the policy it runs and the seed.
  @inline(__always)
  package static func _world(
    _ plan: Plan, seed: UInt64?, spec policy: PolicySpec?, custom: (any SyncPolicy)?, keepEvents: Bool = false,
    recordObservations: Bool = false, app: AppUnderTest? = nil, behaviour: AppBehaviourLog? = nil
  ) -> (world: SyncWorld, policy: any SyncPolicy, seed: UInt64) {
    let file = plan.file
    let seed = seed ?? file.seed
    var spec = policy ?? file.policy
    if let retention = file.retention, !spec.overrides.contains(where: { $0.key == "retention" }) {
      spec.settings.retention = retention
    }
    // The file's `retention` line sets the server's retention for a policy of one's own too, as
    // it does for a preset whose spec does not name one.
    let syncPolicy: any SyncPolicy =
      if let custom {
        if let retention = file.retention, custom.settings.retention != retention { _RetentionOf(base: custom, retention: retention) } else { custom }
      } else {
        StandardPolicy(spec: spec)
      }
    let push: Probability? =
      switch file.push {
      case .on: .always
      case .off: nil
      case .lossy(let p): p
      }
    var config = WorldConfig(
      deviceNames: file.devices, clocks: plan.clocks, schema: file.schema, policy: syncPolicy, seed: seed,
      network: NetworkConditions(latency: file.latency, loss: file.loss, duplication: file.duplicate),
      autosync: file.autosync, push: push, keepsEvents: keepEvents)
    config.server = file.server
    let accounts = file.accountPlan
    config.accounts = accounts.names
    config.deviceAccounts = accounts.initial
    config.shares = plan.shareNames
    config.shareRoots = plan.shareRoots
    config.shareZones = plan.shareZones
    config.recordZones = plan.recordZones
    if !plan.shareNames.isEmpty { config.zoneNames = plan.file.zoneNames }
    if file.schema.latestVersion > 1 || !file.appVersions.isEmpty { config.appVersions = file.initialAppVersions.map { Int32($0) } }
    config.recordObservations = recordObservations
    if !file.bandwidth.isEmpty {
      let world = file.bandwidth.first { $0.device == nil }?.bitsPerSecond ?? 0
      config.bandwidth = file.devices.map { d in file.bandwidth.first { $0.device == d }?.bitsPerSecond ?? world }
    }
    config.context = plan.context
    var world = SyncWorld(config)
    if let app {
      let driver = app.drivers(AppRunContext(plan: plan, seed: seed, behaviour: behaviour))
      for d in file.devices.indices { world.drive(device: d, with: driver(d)) }
    }
    world.reserve(actions: plan.actions.count, intents: plan.intentCount, records: plan.recordNames.count)
    for (time, action) in plan.actions { world.schedule(action, at: time) }
    return (world, syncPolicy, seed)
  }

  /// How a report names a policy value's type for the Swift call that replays it; nil for a
  /// `StandardPolicy` whose name is the spec of its settings, which `sim-cli` runs by that name.
  static func typeToName(_ policy: any SyncPolicy) -> String? {
    if let standard = policy as? StandardPolicy {
      if case .success(let spec) = PolicySpec.parse(standard.name), spec.settings == standard.settings { return nil }
      return "StandardPolicy(name: \(swiftStringLiteral(standard.name)), settings: …)"
    }
    return String(describing: type(of: policy))
  }

  /// Compiles a checked scenario into a plan.
  public static func prepare(_ file: ScenarioFile) -> Plan {
    // Each device's index, and each account's, by name: the first of that name (looked up per
    // entry, not searched: a file may have many devices, or many accounts).
    var deviceIndex: [String: Int32] = [:]
    for (i, d) in file.devices.enumerated() where deviceIndex[d] == nil { deviceIndex[d] = Int32(i) }
    var accountIndex: [String: Int32] = [:]
    for (i, a) in file.accountPlan.names.enumerated() where accountIndex[a] == nil { accountIndex[a] = Int32(i) }
    var clocks = file.devices.map { _ in DeviceClock.perfect }
    for c in file.clocks {
      if let i = deviceIndex[c.device] { clocks[Int(i)] = DeviceClock(skew: c.skew, driftPPM: c.driftPPM) }
    }
    // Each record's key by its name, in order of first create; its type is that create's
    // (`recordTypes[key]`), which is also how its fields are looked up below.
    var names: [String] = []
    var recordTypes: [Int32] = []
    var keys = NameKeys(capacity: file.timeline.count)
    // (Entries read in place by index: `for entry in` copied each one, payload and all.)
    let timeline = file.timeline
    for i in timeline.indices {
      guard case .create(_, let type, let id, _) = timeline[i].action else { continue }
      // (One lookup for the name, new or not.)
      if keys.insertIfAbsent(id, RecordKey(names.count)) {
        names.append(id)
        recordTypes.append(Int32(file.schema.typeIndex(named: type) ?? 0))
      }
    }
    // (A few devices are found faster by comparing their short names than by hashing; the first
    // of a name either way.)
    let deviceNames = file.devices
    let device: (String) -> Int32 =
      deviceNames.count <= 16
      ? { name in deviceNames.firstIndex(of: name).map { Int32($0) } ?? 0 } : { name in deviceIndex[name] ?? 0 }
    // A field's index and kind in a type's field list (the list read once per entry, not copied
    // per assignment).
    func field(in fields: [FieldSpec], _ name: String) -> (Int32, FieldKind)? {
      guard let f = fields.firstIndex(where: { $0.name == name }) else { return nil }
      return (Int32(f), fields[f].kind)
    }
    func fields(of key: RecordKey) -> [FieldSpec] { file.schema.types[Int(recordTypes[Int(key)])].fields }
    func field(_ key: RecordKey, _ name: String) -> (Int32, FieldKind)? { field(in: fields(of: key), name) }
    func writes(_ key: RecordKey, _ assignments: [Assignment]) -> [FieldWrite] {
      let specs = fields(of: key)
      var out: [FieldWrite] = []
      out.reserveCapacity(assignments.count)
      for a in assignments {
        guard let (f, kind) = field(in: specs, a.field) else { continue }
        out.append(FieldWrite(field: f, value: value(a.value, kind: kind, keys: keys)))
      }
      return out
    }
    var actions: [(time: VirtualTime, action: WorldAction)] = []
    actions.reserveCapacity(file.timeline.count)
    var settleAt: VirtualTime?
    var shareNames: [String] = []
    for i in timeline.indices {
      let at = VirtualTime.zero + timeline[i].time
      let action: WorldAction
      switch timeline[i].action {
      case .create(let d, let type, let id, let fields):
        let key = keys[id]!
        action = .intent(device: device(d), .create(type: Int32(file.schema.typeIndex(named: type) ?? 0), key: key, values: writes(key, fields)))
      case .set(let d, let id, let fields):
        guard let key = keys[id] else { continue }
        action = .intent(device: device(d), .set(key: key, values: writes(key, fields)))
      case .append(let d, let id, let f, let text):
        guard let key = keys[id], let (fi, _) = field(key, f) else { continue }
        action = .intent(device: device(d), .append(key: key, field: fi, text: text))
      case .replace(let d, let id, let f, let old, let new):
        guard let key = keys[id], let (fi, _) = field(key, f) else { continue }
        action = .intent(device: device(d), .replace(key: key, field: fi, old: old, new: new))
      case .delete(let d, let id):
        guard let key = keys[id] else { continue }
        action = .intent(device: device(d), .delete(key: key))
      case .sync(let d): action = .sync(device: device(d))
      case .send(let d): action = .send(device: device(d))
      case .fetch(let d): action = .fetch(device: device(d))
      case .kill(let d): action = .kill(device: device(d))
      case .background(let d, let budget): action = .background(device: device(d), budget: budget)
      case .clockJump(let d, let by): action = .clockJump(device: device(d), by: by)
      case .syncAll: action = .syncAll
      case .offline(let ds): action = .setOnline(ds.map(device), false)
      case .online(let ds): action = .setOnline(ds.map(device), true)
      case .serverDown: action = .server(up: false)
      case .serverUp: action = .server(up: true)
      case .free(let bytes): action = .freeStorage(bytes: bytes)
      case .deleteZone(let d): action = .deleteZone(device: device(d), .deleted)
      case .purgeZone(let d): action = .deleteZone(device: device(d), .purged)
      case .encryptedDataReset: action = .deleteZone(device: nil, .encryptedDataReset)
      case .signOut(let d): action = .account(device: device(d), nil)
      case .upgrade(let d, let version): action = .upgrade(device: device(d), version: Int32(version))
      case .file(let d, let id, let f, let changed):
        guard let key = keys[id], let (fi, _) = field(key, f) else { continue }
        action = .file(device: device(d), key: key, field: fi, changed: changed)
      case .purgeStaging(let d): action = .purgeStaging(device: device(d))
      case .signIn(let d, let account, _):
        action = .account(device: device(d), accountIndex[account] ?? 0)
      case .reject(let ids, let error, let retryAfter, let duration):
        action = .reject(RejectRule(keys: ids.compactMap { keys[$0] }, error: error, retryAfter: retryAfter, until: at + duration))
      case .sharing(let d, let statement):
        if shareNames.isEmpty { shareNames = file.shareNames }
        // (A file cut down by the shrinker may name a share no `share` line makes any more.)
        guard let index = shareNames.firstIndex(of: statement.share) else { continue }
        let s = Int32(index)
        func account(_ name: String) -> Int32 { accountIndex[name] ?? 0 }
        let shareAction: ShareAction =
          switch statement {
          case .share: .share(s)
          case .invite(_, let a, let p): .invite(s, account: account(a), p)
          case .accept: .accept(s)
          case .leave: .leave(s)
          case .unshare: .unshare(s)
          case .permission(_, let a, let p): .permission(s, account: account(a), p)
          case .remove(_, let a): .remove(s, account: account(a))
          }
        action = .share(device: device(d), shareAction)
      case .settle:
        settleAt = at
        continue
      }
      actions.append((at, action))
    }
    // `at T settle` settles at T. A standalone or implied settle starts one minute after the
    // last timeline entry, so that what the timeline set going (a background window, requests
    // in flight) plays out under the scenario's faults first.
    let end = settleAt ?? ((file.timeline.last.map { VirtualTime.zero + $0.time } ?? .zero) + ScenarioRunner.settleGrace)
    let intents = actions.reduce(0) {
      if case .intent = $1.action { return $0 + 1 }
      return $0
    }
    return Plan(
      file: file, recordNames: names, recordTypes: recordTypes, clocks: clocks, actions: actions, settleAt: end, intentCount: intents,
      context: MergeContext(schema: file.schema), shareNames: shareNames,
      // (A root whose create the shrinker cut is a key no record has: the share is never made.)
      shareRoots: shareNames.isEmpty ? [] : file.shareRoots.map { $0.map { keys[$0] ?? RecordKey(names.count) } },
      shareZones: shareNames.isEmpty ? [] : zoneNumbers(file).shares, recordZones: shareNames.isEmpty ? [] : zoneNumbers(file, names).records)
  }

  /// The zones of a file that shares, by number (0: the app's zone; the zones `create … in`
  /// lines name from 1, in the order of ``ScenarioFile/zoneNames``): each share's, and each
  /// record's (by key, the order of `names`). A zone no create line names any more (cut by the
  /// shrinker) is one no record is in.
  static func zoneNumbers(_ file: ScenarioFile, _ names: [String] = []) -> (shares: [Int32], records: [Int32]) {
    let zones = file.zoneNames
    func number(_ z: String?) -> Int32 {
      guard let z else { return 0 }
      return Int32((zones.firstIndex(of: z) ?? zones.count) + 1)
    }
    let shares = file.shareZones.map(number)
    let records = file.recordZones.isEmpty ? [] : names.map { number(file.recordZones[$0]) }
    return (shares, records)
  }

  /// A scenario literal as a field value of the given kind.
  package static func value(_ literal: Literal, kind: FieldKind, keys: NameKeys) -> Value {
    switch (literal, kind) {
    case (.string(let s), .text): .text(TextValue(s, by: 0))
    case (.string(let s), _): .string(s)
    case (.int(let i), .double): .double(Double(i))
    case (.int(let i), _): .int(i)
    case (.double(let d), _): .double(d)
    case (.bytes(let b), _): .bytes(b)
    case (.content(let name, let size, let isAsset), _): .content(Content(name: name, size: size, isAsset: isAsset))
    case (.bool(let b), _): .bool(b)
    case (.duration(let d), _): .date(d.nanoseconds)
    case (.identifier(let id), _): keys[id].map { .ref($0) } ?? .null
    }
  }
}

/// A policy of one's own with the scenario's retention: everything else is the policy's.
struct _RetentionOf: SyncPolicy {
  var base: any SyncPolicy
  var retention: SimDuration
  var name: String { base.name }
  var settings: PolicySettings {
    var settings = base.settings
    settings.retention = retention
    return settings
  }
  var tracksVersions: Bool { base.tracksVersions }
  func serverSave(_ write: RecordWrite, current: RecordState?, context: MergeContext) -> SaveDecision {
    base.serverSave(write, current: current, context: context)
  }
  func serverDelete(_ write: RecordWrite, current: RecordState, context: MergeContext) -> RecordState? {
    base.serverDelete(write, current: current, context: context)
  }
  func deviceApply(remote: RecordState, local: RecordState?, pending: FieldMask?, context: MergeContext) -> RecordState {
    base.deviceApply(remote: remote, local: local, pending: pending, context: context)
  }
  func resolveConflict(client: RecordState, server: RecordState, ancestor: RecordState?, context: MergeContext) -> RecordState {
    base.resolveConflict(client: client, server: server, ancestor: ancestor, context: context)
  }
}
