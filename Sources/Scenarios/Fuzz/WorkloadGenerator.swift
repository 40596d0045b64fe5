import Replica
@_spi(Kernel) import Simulator

/// Draws one seed's swarm profile and timeline of intents, as a scenario file — so that every
/// fuzz case is something `sim-cli run` can replay and the shrinker can cut down.
public enum WorkloadGenerator {
  /// Draws seed `seed`'s swarm profile and timeline as a scenario file without expectations,
  /// whose `policy` and `seed` lines are `policy` and `seed`. Pure: the same arguments give the
  /// same file.
  public static func generate(seed: UInt64, shape: WorkloadShape, policy: PolicySpec) -> (file: ScenarioFile, profile: SwarmProfile) {
    var faults = SimRandom(seed: seed, stream: "workload-faults")
    var work = SimRandom(seed: seed, stream: "workload-intents")
    let here = SourceLocation(line: 0, column: 0)

    // Devices and schema.
    let devices: [String]
    if let base = shape.base {
      devices = base.devices
    } else {
      let n = Int(faults.int(in: Int64(shape.deviceCounts.lowerBound)...Int64(shape.deviceCounts.upperBound)))
      devices = (0..<n).map { i in i < WorkloadShape.deviceNames.count ? WorkloadShape.deviceNames[i] : "d\(i)" }
    }
    var schema = shape.schema ?? shape.base?.schema ?? (shape.forApps ? WorkloadShape.appSchema : WorkloadShape.essaySchema)

    // The swarm profile.
    let duration: SimDuration = pick(&faults, [(.seconds(20), 3), (.minutes(2), 4), (.minutes(10), 2), (.hours(1), 1)])
    let low = faults.int(in: 5...50)
    let latency: LatencyModel =
      faults.chance(3, outOf: 10)
      ? .fixed(.milliseconds(low))
      : .uniform(.milliseconds(low), .milliseconds(low + faults.int(in: 10...1_500)))
    let loss = faults.chance(1, outOf: 2) ? Probability.never : Probability(UInt64(faults.int(in: 1...10)), outOf: 100)
    let duplicate = faults.chance(7, outOf: 10) ? Probability.never : Probability(UInt64(faults.int(in: 1...5)), outOf: 100)
    let push: PushSetting = pick(&faults, [(.on, 6), (.off, 2), (.lossy(Probability(1, outOf: 2)), 2)])
    let autosync: SimDuration? = pick(&faults, [(.seconds(1), 7), (.milliseconds(200), 2), (nil, 1)])
    // The retention in force is the policy's: the essay's "adequate retention" is a property of
    // the design under test, so the swarm does not shorten it.
    let retention: SimDuration? = nil
    var skews: [(device: String, skew: SimDuration, driftPPM: Int64)] = []
    for d in devices where faults.chance(2, outOf: 5) {
      let magnitude = pick(&faults, [(SimDuration.milliseconds(300), 2), (.seconds(5), 3), (.minutes(2), 2), (.minutes(15), 1)])
      let skew = faults.chance(1, outOf: 2) ? magnitude : -magnitude
      let drift = faults.chance(3, outOf: 10) ? faults.int(in: -200...200) : 0
      skews.append((d, skew, drift))
    }
    let offlineWindows = Int(faults.int(in: 0...6))
    let longOffline = faults.chance(1, outOf: 20)
    let kills = Int(faults.int(in: 0...3))
    let backgrounds = Int(faults.int(in: 0...3))
    let jumps = Int(faults.int(in: 0...2))
    let outages = Int(faults.int(in: 0...2))

    var timeline: [TimelineEntry] = []
    func at(_ t: SimDuration, _ action: TimelineAction) { timeline.append(TimelineEntry(time: t, action: action, location: here)) }
    func randomTime(_ r: inout SimRandom, within span: SimDuration = duration) -> SimDuration {
      .milliseconds(r.int(in: 0...(span.nanoseconds / 1_000_000)))
    }
    func device(_ r: inout SimRandom) -> String { devices[r.int(in: 0..<devices.count)] }

    // Faults.
    for _ in 0..<offlineWindows {
      let d = device(&faults)
      let start = randomTime(&faults)
      let length = SimDuration.milliseconds(faults.int(in: 1_000...max(1_001, duration.nanoseconds / 2_000_000)))
      at(start, .offline([d]))
      at(start + length, .online([d]))
    }
    if longOffline {
      let d = device(&faults)
      let start = randomTime(&faults)
      // Longer than a week (naive-refetch's retention) and shorter than 30 days (the presets'
      // default retention): a device that outlives the retention of the design under test
      // meets an expired token; an adequate retention never lets it.
      let length = SimDuration.hours(faults.int(in: 8 * 24 + 1...26 * 24))
      at(start, .offline([d]))
      at(start + length, .online([d]))
    }
    for _ in 0..<kills { at(randomTime(&faults), .kill(device: device(&faults))) }
    // (Drawn for apps too, so that every later draw is the same; a driven device does not
    // simulate background windows or clock jumps yet, so an app's workload leaves them out.)
    for _ in 0..<backgrounds {
      let (t, d, budget) = (randomTime(&faults), device(&faults), SimDuration.milliseconds(faults.int(in: 50...10_000)))
      if !shape.forApps { at(t, .background(device: d, budget: budget)) }
    }
    for _ in 0..<jumps {
      let by = SimDuration.seconds(faults.int(in: 1...600)) * (faults.chance(1, outOf: 2) ? 1 : -1)
      let (t, d) = (randomTime(&faults), device(&faults))
      if !shape.forApps { at(t, .clockJump(device: d, by: by)) }
    }
    for _ in 0..<outages {
      let start = randomTime(&faults)
      at(start, .serverDown)
      at(start + .milliseconds(faults.int(in: 1_000...max(1_001, duration.nanoseconds / 4_000_000))), .serverUp)
    }

    // Intents.
    var intents = IntentDrafter(
      schema: schema, devices: devices, shaped: shape.base == nil && shape.schema == nil && !shape.forApps, forApps: shape.forApps)
    let times = (0..<shape.intents).map { _ in randomTime(&work) }.sorted()
    // Real schemas, from a stream of their own (the default shape only): folders that notes
    // are filed in (references with a delete rule), a settings singleton every device creates
    // at first launch (uniqueness), and a second schema version rolled out one device at a time
    // (app versions).
    var real = RealSchemaDrafter(
      seed: seed, devices: devices, duration: duration, enabled: shape.base == nil && shape.schema == nil && !shape.forApps)
    real.extend(&schema)
    let checksReferences = real.checksReferences
    for (t, action) in real.launches { at(t, action) }
    // For an app, a third of deletes are followed by the same device creating the record again
    // under its name within 5 s (often before the delete is sent: the two pending changes meet),
    // drawn from a stream of their own so that every other draw stays what it was.
    var recreates = SimRandom(seed: seed, stream: "workload-recreates")
    for t in times {
      if let action = intents.next(&work, device: device(&work)) {
        at(t, action)
        if shape.forApps, shape.recreates, case .delete(let d, let id) = action, recreates.chance(1, outOf: 3),
          let again = intents.recreate(id, by: d, &recreates)
        {
          at(t + .milliseconds(recreates.int(in: 1...5_000)), again)
        }
      }
      if work.chance(1, outOf: 12) { at(t, .sync(device: device(&work))) }
      for action in real.next(at: t, notes: intents.liveOf(0)) { at(t, action) }
    }

    // The CloudKit surface, from a stream of its own: every earlier draw stays what it was.
    var cloud = SimRandom(seed: seed, stream: "workload-cloudkit")
    var server = ServerConditions()
    var freedAt: SimDuration?
    if cloud.chance(1, outOf: 8) {
      // Nearly full: room for a few records. The user frees space before the window ends (an
      // engine that tells them is the safe design); an engine that gives up loses what failed.
      let quota = Int64(20_000)
      server.quota = quota
      server.usedByOthers = quota - cloud.int(in: 200...3_000)
      let free = randomTime(&cloud)
      freedAt = free
      at(free, .free(bytes: 1_000_000_000))
    }
    if cloud.chance(1, outOf: 8) {
      let window = pick(&cloud, [(SimDuration.seconds(10), 1), (.minutes(1), 2)])
      server.throttle = Throttle(
        perDevice: cloud.chance(2, outOf: 3) ? RequestBudget(requests: Int(cloud.int(in: 3...12)), window: window) : nil,
        app: cloud.chance(1, outOf: 2) ? RequestBudget(requests: Int(cloud.int(in: 6...30)), window: window) : nil)
      if server.throttle?.perDevice == nil && server.throttle?.app == nil {
        server.throttle?.perDevice = RequestBudget(requests: 5, window: window)
      }
    }
    if cloud.chance(1, outOf: 4) { server.atomic = true }
    server.checksReferences = checksReferences
    if cloud.chance(1, outOf: 8) { server.maxRecordsPerRequest = Int(cloud.int(in: 2...8)) }
    // Transient errors for chosen records, for a while (errors a correct engine can outlast;
    // a permanent one strands its record under any design, so the swarm does not draw it).
    // (For a user's app, only those retried as they are: an `unknownItem` for a record the
    // server has is a contradiction an app cannot resolve, and a zone error for a zone that is
    // there one it cannot act on. Nor `referenceViolation`: CloudKit answers it only for a
    // reference whose target is missing, which the server checks itself — drawn alone, it fails
    // the save of a record that may have no reference at all, as Apple's sample, ported, showed.)
    let transient = CloudKitError.perRecord.filter {
      $0.reaction != .giveUp && (!shape.forApps || ($0.reaction == .retry && $0 != .referenceViolation))
    }
    var rejections = 0
    let ids = intents.createdIDs
    if !ids.isEmpty {
      for _ in 0..<Int(pick(&cloud, [(0, 6), (1, 3), (2, 1)])) {
        let count = Int(cloud.int(in: 1...Int64(min(3, ids.count))))
        var chosen: [String] = []
        for _ in 0..<count {
          let id = ids[cloud.int(in: 0..<ids.count)]
          if !chosen.contains(id) { chosen.append(id) }
        }
        let error = transient[cloud.int(in: 0..<transient.count)]
        let retryAfter: SimDuration? = error.carriesRetryAfter ? .seconds(cloud.int(in: 1...60)) : nil
        at(randomTime(&cloud), .reject(ids: chosen, error: error, retryAfter: retryAfter, duration: .seconds(cloud.int(in: 1...120))))
        rejections += 1
      }
    }

    // A zone deletion: the app's "delete all data" on a device, a purge in Settings, or an
    // encrypted-data reset.
    var zoneDeletion: (time: SimDuration, what: String)?
    if cloud.chance(1, outOf: 12) {
      let t = randomTime(&cloud)
      let d = device(&cloud)
      switch cloud.int(in: 0..<3) {
      case 0:
        at(t, .deleteZone(device: d))
        zoneDeletion = (t, "deleted by \(d)")
      case 1:
        at(t, .purgeZone(device: d))
        zoneDeletion = (t, "purged on \(d)")
      default:
        // A reset loses the server's tombstones: a device that had not seen a delete uploads
        // its copy again, before or after the delete — a loss no engine can prevent. A seed
        // that resets draws no deletes, so that the correct reaction (upload everything again)
        // loses nothing.
        timeline.removeAll { if case .delete = $0.action { true } else { false } }
        at(t, .encryptedDataReset)
        zoneDeletion = (t, "encrypted-data reset")
      }
    }
    // An iCloud sign-out and sign-in again (the same account) on one device, perhaps offline,
    // with the app used in between.
    var signedOut: (device: String, from: SimDuration, to: SimDuration)?
    if cloud.chance(1, outOf: 10) {
      let d = device(&cloud)
      let from = randomTime(&cloud)
      let to = from + .milliseconds(cloud.int(in: 1_000...max(1_001, duration.nanoseconds / 2_000_000)))
      at(from, .signOut(device: d))
      at(to, .signIn(device: d, account: "icloud", switch: false))
      signedOut = (d, from, to)
    }

    // A seed that deletes the zone runs on a clean network: with a request cut off in flight
    // (loss, an outage, a kill, an expired background window, going offline, a sign-out, a lost
    // answer), no engine can tell whether its record was in the zone that went; the swarm tests
    // the design, not that doubt.
    var clean = (loss: loss, offlineWindows: offlineWindows, longOffline: longOffline, kills: kills, backgrounds: backgrounds, outages: outages)
    if zoneDeletion != nil {
      clean = (.never, 0, false, 0, 0, 0)
      signedOut = nil
      timeline.removeAll { e in
        switch e.action {
        // (An app update terminates the app too: the rollout is left out, every device on v2.)
        case .offline, .online, .kill, .background, .serverDown, .serverUp, .signOut, .signIn, .upgrade: return true
        case .reject(_, .serverResponseLost, _, _): return true
        default: return false
        }
      }
      rejections = timeline.filter { if case .reject = $0.action { true } else { false } }.count
      real.appVersions = []
      real.upgradeTimes = [:]
    }

    // A duplicated request can be saved by one copy and refused by the other (throttled, or by
    // a reject rule): its device is told the save failed while the zone holds the record, the
    // same doubt. For an app a zone-deleting seed has no duplicates (found by the reference app's
    // 100,000 seeds: seed 74005; a preset fails the shrunk scenario too, but the default workload
    // keeps its duplicates so that the presets' fuzz records stay as they were).
    let sentTwice = zoneDeletion != nil && shape.forApps ? Probability.never : duplicate
    timeline = stableSorted(timeline)
    var profile = SwarmProfile(
      devices: devices, duration: duration, latency: latency, loss: clean.loss, duplicate: sentTwice, push: push,
      autosync: autosync, retention: retention, skews: skews, offlineWindows: clean.offlineWindows, longOffline: clean.longOffline,
      kills: clean.kills, backgroundWindows: clean.backgrounds, clockJumps: jumps, outages: clean.outages, intents: shape.intents)
    profile.server = server
    profile.freedAt = freedAt
    profile.rejections = rejections
    profile.zoneDeletion = zoneDeletion
    profile.signedOut = signedOut
    profile.folders = real.folderRule
    profile.singleton = real.settingsMakers
    profile.rollout = real.appVersions.isEmpty ? nil : real.rolloutText
    var file = ScenarioFile(
      source: "\(shape.name)-seed-\(seed).scenario", name: "\(shape.name)-seed-\(seed)",
      about: "Generated by sim-cli fuzz from seed \(seed): \(profile)", devices: devices, policy: policy, seed: seed,
      latency: latency, loss: clean.loss, duplicate: sentTwice,
      clocks: skews.map { ClockSetting(device: $0.device, skew: $0.skew, driftPPM: $0.driftPPM, location: here) },
      retention: retention, autosync: autosync, push: push, schema: schema, timeline: timeline, expectations: [])
    file.server = server
    file.appVersions = real.appVersions
    return (file, profile)
  }

  static func pick<T>(_ r: inout SimRandom, _ weighted: [(T, Int)]) -> T {
    let total = weighted.reduce(0) { $0 + $1.1 }
    var x = r.int(in: 0..<total)
    for (value, weight) in weighted {
      if x < weight { return value }
      x -= weight
    }
    return weighted[weighted.count - 1].0
  }

  /// By time, entries at one time in their order. Sorts positions, not entries (an entry is a
  /// large value; moving positions is cheaper).
  static func stableSorted(_ entries: [TimelineEntry]) -> [TimelineEntry] {
    // (Pairs of time and position, sorted in place: no lookups from the comparison. The
    // positions make every key distinct, so the order is the one stable sort gives.)
    var order = entries.indices.map { (time: entries[$0].time, index: $0) }
    order.sort { ($0.time, $0.index) < ($1.time, $1.index) }
    return order.map { entries[$0.index] }
  }
}

/// The swarm's real-schema dimensions for the default shape: folders (a reference with a delete
/// rule drawn per seed), a settings singleton, and a staged rollout of schema version 2 (a
/// `color` on notes). Draws only from its own stream, so a seed that draws none of them keeps
/// every other draw.
struct RealSchemaDrafter {
  var r: SimRandom
  let devices: [String]
  let duration: SimDuration
  /// `on-delete` of `Note.folder`, when the seed files notes in folders.
  var folderRule: DeleteRule?
  /// Whether the server checks references (`references checked`).
  var checksReferences = false
  /// The devices that create the settings singleton at first launch.
  var settingsMakers: [String] = []
  /// When each device runs version 2 (nil: never in the window); empty without a rollout.
  var upgradeTimes: [String: SimDuration?] = [:]
  var appVersions: [AppVersionSetting] = []
  /// The first-launch creates and the upgrades, at their times.
  var launches: [(SimDuration, TimelineAction)] = []
  var folders: [(id: String, creator: String)] = []
  /// The folder each note was last filed in (by whichever device), in filing order.
  var filed: [(note: String, folder: String)] = []
  var settings: [(id: String, device: String)] = []
  var counter = 0

  init(seed: UInt64, devices: [String], duration: SimDuration, enabled: Bool) {
    r = SimRandom(seed: seed, stream: "workload-schema")
    self.devices = devices
    self.duration = duration
    guard enabled else { return }
    if r.chance(1, outOf: 4) { folderRule = r.chance(1, outOf: 2) ? .cascade : .nullify }
    if r.chance(1, outOf: 4) {
      settingsMakers = devices.filter { _ in r.chance(2, outOf: 3) }
      if settingsMakers.count < 2 { settingsMakers = Array(devices.prefix(2)) }
      for d in settingsMakers {
        counter += 1
        let id = "u\(counter)"
        settings.append((id, d))
        launches.append(
          (.milliseconds(r.int(in: 0...max(1, duration.nanoseconds / 10_000_000))), .create(device: d, type: "Settings", id: id, fields: [])))
      }
    }
    if devices.count >= 2, r.chance(1, outOf: 4) {
      // Some devices start on version 1; each of them updates at some point, or not in the window.
      var old = devices.filter { _ in r.chance(1, outOf: 2) }
      if old.isEmpty { old = [devices[r.int(in: 0..<devices.count)]] }
      if old.count == devices.count { old.removeLast() }
      appVersions = [AppVersionSetting(version: 1, devices: old, location: SourceLocation(line: 0, column: 0))]
      for d in devices { upgradeTimes[d] = .some(.zero) }
      for d in old {
        if r.chance(3, outOf: 4) {
          let t = SimDuration.milliseconds(r.int(in: 1...max(2, duration.nanoseconds / 1_000_000)))
          upgradeTimes[d] = .some(t)
          launches.append((t, .upgrade(device: d, version: 2)))
        } else {
          upgradeTimes[d] = .some(nil)
        }
      }
    }
    // With folders, the server may check references (an engine that uses CKRecord.Reference).
    checksReferences = folderRule != nil && r.chance(1, outOf: 3)
  }

  /// Adds the drawn types and fields to the essay's schema (after its own, so that their indices
  /// stay).
  func extend(_ schema: inout Schema) {
    if let folderRule {
      schema.types.append(RecordType(name: "Folder", fields: [FieldSpec(name: "name", kind: .string, defaultValue: .string(""), mutable: true)]))
      schema.types[0].fields.append(FieldSpec(name: "folder", kind: .ref("Folder"), optional: true, mutable: true, onDelete: folderRule))
    }
    if !settingsMakers.isEmpty {
      schema.types.append(
        RecordType(
          name: "Settings", fields: [FieldSpec(name: "theme", kind: .string, defaultValue: .string("light"), mutable: true)], uniqueness: .singleton))
    }
    if !upgradeTimes.isEmpty {
      schema.types[0].fields.append(FieldSpec(name: "color", kind: .string, defaultValue: .string("none"), mutable: true, since: 2))
    }
  }

  /// `rollout: phone v1 → v2 at 3.2s, mac v1`, for the profile.
  var rolloutText: String? {
    guard let old = appVersions.first?.devices else { return nil }
    return old.map { d in
      if case .some(.some(let t)) = upgradeTimes[d] { return "\(d) v1 → v2 at \(t)" }
      return "\(d) v1"
    }.joined(separator: ", ")
  }

  func version(of device: String, at t: SimDuration) -> Int {
    switch upgradeTimes[device] {
    case nil: 2
    case .some(nil): 1
    case .some(.some(let at)): t >= at ? 2 : 1
    }
  }

  func assign(_ field: String, _ value: Literal) -> Assignment {
    Assignment(field: field, value: value, location: SourceLocation(line: 0, column: 0))
  }

  /// What the dimensions add at time `t` of a main intent, with the notes live then.
  mutating func next(at t: SimDuration, notes: [(id: String, type: Int, creator: String)]) -> [TimelineAction] {
    var out: [TimelineAction] = []
    let device = devices[r.int(in: 0..<devices.count)]
    if folderRule != nil, r.chance(1, outOf: 5) {
      let roll = r.int(in: 0..<10)
      let mine = folders.filter { $0.creator == device }
      if roll < 3 || folders.isEmpty {
        counter += 1
        let id = "f\(counter)"
        folders.append((id, device))
        out.append(.create(device: device, type: "Folder", id: id, fields: [assign("name", .string("folder \(counter)"))]))
      } else if roll < 8, !notes.isEmpty {
        // File a note: mostly the device's own note in its own folder.
        let ownNotes = notes.filter { $0.creator == device }
        let candidates = ownNotes.isEmpty ? notes : ownNotes
        let note = candidates[r.int(in: 0..<candidates.count)].id
        let pool = mine.isEmpty ? folders : mine
        let folder = pool[r.int(in: 0..<pool.count)].id
        out.append(.set(device: device, id: note, fields: [assign("folder", .identifier(folder))]))
        filed.removeAll { $0.note == note }
        filed.append((note, folder))
      } else if !folders.isEmpty {
        let victim = folders.remove(at: r.int(in: 0..<folders.count)).id
        // Half the time the user first moves a note filed there to another folder, to keep it.
        if let rescue = filed.last(where: { f in f.folder == victim && notes.contains { $0.id == f.note } }), !folders.isEmpty,
          r.chance(1, outOf: 2)
        {
          let other = folders[r.int(in: 0..<folders.count)].id
          out.append(.set(device: device, id: rescue.note, fields: [assign("folder", .identifier(other))]))
          filed.removeAll { $0.note == rescue.note }
          filed.append((rescue.note, other))
        }
        filed.removeAll { $0.folder == victim }
        out.append(.delete(device: device, id: victim))
      }
    }
    if !settings.isEmpty, r.chance(1, outOf: 8) {
      let own = settings.filter { $0.device == device }
      if let id = own.first?.id {
        counter += 1
        out.append(.set(device: device, id: id, fields: [assign("theme", .string("theme \(counter)"))]))
      }
    }
    if !upgradeTimes.isEmpty, r.chance(1, outOf: 6), !notes.isEmpty, version(of: device, at: t) >= 2 {
      counter += 1
      let note = notes[r.int(in: 0..<notes.count)].id
      out.append(.set(device: device, id: note, fields: [assign("color", .string("c\(counter)"))]))
    }
    return out
  }
}

/// Makes up intents that make sense: records are used after they are created, deleted ones
/// are left alone, and in the default shape a note's body is written only by the device that
/// made it (the essay's design: concurrent work is inserts; title and preference are mutable).
struct IntentDrafter {
  let schema: Schema
  let devices: [String]
  let shaped: Bool
  /// The workload for a user's app: values unique per intent (no booleans, no references), and
  /// appends as the only text edits.
  var forApps = false
  var counter = 0
  /// Live records in creation order: id, type index, creating device (change it with
  /// ``add(_:type:creator:)`` and ``remove(_:)``, which keep ``byType`` in step).
  private(set) var live: [(id: String, type: Int, creator: String)] = []
  /// ``live`` split by type, in the same order.
  private(set) var byType: [[(id: String, type: Int, creator: String)]]
  /// The id prefix of each type: its name's first letter, lowercased (`n` for Note).
  let idPrefixes: [String]

  init(schema: Schema, devices: [String], shaped: Bool, forApps: Bool = false) {
    self.schema = schema
    self.devices = devices
    self.shaped = shaped
    self.forApps = forApps
    byType = Array(repeating: [], count: schema.types.count)
    idPrefixes = schema.types.map { String($0.name.prefix(1)).lowercased() }
  }

  /// Every id created so far, in order (deleted ones too: a `reject` line may name them).
  var createdIDs: [String] = []
  /// For the workload for apps: the records each `record.field` reference ever named.
  var referred: [String: [String]] = [:]
  /// The type of every id created so far.
  var typeOf: [String: Int] = [:]

  mutating func fresh(_ prefix: String) -> String {
    counter += 1
    return "\(prefix)\(counter)"
  }

  func liveOf(_ type: Int) -> [(id: String, type: Int, creator: String)] {
    type >= 0 && type < byType.count ? byType[type] : []
  }

  mutating func add(_ id: String, type: Int, creator: String) {
    live.append((id, type, creator))
    if type >= 0 && type < byType.count { byType[type].append((id, type, creator)) }
  }

  /// Removes a record (ids are unique).
  mutating func remove(_ id: String) {
    guard let i = live.firstIndex(where: { $0.id == id }) else { return }
    let type = live[i].type
    live.remove(at: i)
    if type >= 0 && type < byType.count { byType[type].removeAll { $0.id == id } }
  }

  mutating func next(_ r: inout SimRandom, device: String) -> TimelineAction? {
    shaped ? nextShaped(&r, device: device) : nextGeneric(&r, device: device)
  }

  mutating func create(_ type: Int, by device: String, fields: [Assignment]) -> TimelineAction {
    let name = schema.types[type].name
    let id = fresh(idPrefixes[type])
    createdIDs.append(id)
    typeOf[id] = type
    add(id, type: type, creator: device)
    return .create(device: device, type: name, id: id, fields: fields)
  }

  /// The record `id`, just deleted by `device`, created again there under its name, with fresh
  /// values (nil if it is not a record this drafter made).
  mutating func recreate(_ id: String, by device: String, _ r: inout SimRandom) -> TimelineAction? {
    guard let type = typeOf[id] else { return nil }
    var unmet = false
    let fields = schema.types[type].fields.compactMap { f -> Assignment? in
      let value = literal(for: f, &r, device: device, record: id)
      if value == nil, case .ref = f.kind, !f.optional { unmet = true }
      return value.map { assign(f.name, $0) }
    }
    // (Not when a required reference has nothing to name: the app could not make it.)
    if unmet { return nil }
    add(id, type: type, creator: device)
    return .create(device: device, type: schema.types[type].name, id: id, fields: fields)
  }

  func assign(_ field: String, _ value: Literal) -> Assignment {
    Assignment(field: field, value: value, location: SourceLocation(line: 0, column: 0))
  }

  /// The default shape: 0 Note(title, body), 1 Stroke(note, points), 2 Preference(value).
  mutating func nextShaped(_ r: inout SimRandom, device: String) -> TimelineAction? {
    if liveOf(2).isEmpty { return create(2, by: device, fields: []) }
    let notes = liveOf(0)
    let roll = r.int(in: 0..<100)
    if roll < 15 || notes.isEmpty {
      counter += 1
      return create(0, by: device, fields: [assign("title", .string("t\(counter)")), assign("body", .string("b\(counter)"))])
    }
    if roll < 45 {
      // A stroke goes on a note the device can show: mostly one it made (another device's
      // note may not have reached it yet, and an intent naming it would be ignored).
      let mine = notes.filter { $0.creator == device }
      let pool = !mine.isEmpty && r.chance(2, outOf: 3) ? mine : notes
      let note = pool[r.int(in: 0..<pool.count)].id
      counter += 1
      return create(1, by: device, fields: [assign("note", .identifier(note)), assign("points", .string("p\(counter)"))])
    }
    if roll < 60 {
      counter += 1
      return .set(device: device, id: notes[r.int(in: 0..<notes.count)].id, fields: [assign("title", .string("t\(counter)"))])
    }
    if roll < 75 {
      let mine = notes.filter { $0.creator == device }
      guard !mine.isEmpty else { return nil }
      counter += 1
      return .append(device: device, id: mine[r.int(in: 0..<mine.count)].id, field: "body", text: " +\(counter)")
    }
    if roll < 90 {
      counter += 1
      return .set(device: device, id: liveOf(2)[0].id, fields: [assign("value", .string("v\(counter)"))])
    }
    let pool = roll < 96 ? notes : liveOf(1)
    guard !pool.isEmpty else { return nil }
    let victim = pool[r.int(in: 0..<pool.count)].id
    remove(victim)
    return .delete(device: device, id: victim)
  }

  /// Any schema: creates, sets of scalar fields, appends and replacements in text, deletes.
  mutating func nextGeneric(_ r: inout SimRandom, device: String) -> TimelineAction? {
    guard !schema.types.isEmpty else { return nil }  // nothing to make records of
    let roll = r.int(in: 0..<100)
    if roll < 30 || live.isEmpty {
      let type = r.int(in: 0..<schema.types.count)
      var unmet = false
      let fields = schema.types[type].fields.compactMap { f -> Assignment? in
        let value = literal(for: f, &r, device: device, record: "#new")
        if value == nil, case .ref = f.kind, !f.optional { unmet = true }
        return value.map { assign(f.name, $0) }
      }
      if forApps, unmet {
        // A record whose required reference has nothing to name is one the app cannot make
        // (the server would refuse it): none this time.
        for field in schema.types[type].fields { referred.removeValue(forKey: "#new." + field.name) }
        return nil
      }
      let action = create(type, by: device, fields: fields)
      if forApps, case .create(_, _, let id, _) = action {
        // The references the create named are its record's.
        for field in schema.types[type].fields where referred["#new." + field.name] != nil {
          referred[id + "." + field.name] = referred.removeValue(forKey: "#new." + field.name)
        }
      }
      return action
    }
    let target = live[r.int(in: 0..<live.count)]
    let type = schema.types[target.type]
    // For an app, a field that is not `mutable` says no two devices edit it at once (a
    // last-writer-wins loss there is a loss): only the device that made the record sets it.
    // Text is merged, so any device appends to it.
    let editable = forApps ? type.fields.filter { $0.mutable || $0.kind == .text || target.creator == device } : type.fields
    if roll < 90, !type.appendOnly, !editable.isEmpty {
      let f = editable[r.int(in: 0..<editable.count)]
      counter += 1
      if f.kind == .text {
        // An app's text gets appends whose text no other contains (` +1;` is not in ` +12;`),
        // so the oracle can tell whose each piece of what the app shows is.
        if forApps { return .append(device: device, id: target.id, field: f.name, text: " +\(counter);") }
        return r.chance(2, outOf: 3) || counter < 3
          ? .append(device: device, id: target.id, field: f.name, text: " +\(counter)")
          : .replace(device: device, id: target.id, field: f.name, old: "+", new: "*\(counter)")
      }
      guard let value = literal(for: f, &r, device: device, record: target.id) else { return nil }
      return .set(device: device, id: target.id, fields: [assign(f.name, value)])
    }
    remove(target.id)
    return .delete(device: device, id: target.id)
  }

  mutating func literal(for field: FieldSpec, _ r: inout SimRandom, device: String? = nil, record: String? = nil) -> Literal? {
    counter += 1
    if forApps {
      switch field.kind {
      case .bool: return nil
      case .ref(let target):
        // For an app, values are unique per intent: a reference names a record of the target
        // type this field of this record never named (the app's values say who wrote them),
        // mostly one the device made (it shows it); none when there is no such record.
        guard let t = schema.typeIndex(named: target), let record else { return nil }
        let used = referred[record + "." + field.name] ?? []
        let pool = liveOf(t).filter { !used.contains($0.id) }
        let mine = pool.filter { $0.creator == device }
        let from = !mine.isEmpty && r.chance(2, outOf: 3) ? mine : pool
        guard !from.isEmpty else { return nil }
        let id = from[r.int(in: 0..<from.count)].id
        referred[record + "." + field.name, default: []].append(id)
        return .identifier(id)
      default: break
      }
    }
    switch field.kind {
    case .string, .text: return .string("v\(counter)")
    case .int: return .int(Int64(counter))
    case .bool: return .bool(r.chance(1, outOf: 2))
    case .date: return .duration(.seconds(Int64(counter)))
    case .ref(let target):
      guard let t = schema.typeIndex(named: target) else { return nil }
      let pool = liveOf(t)
      return pool.isEmpty ? nil : .identifier(pool[r.int(in: 0..<pool.count)].id)
    }
  }
}
