import Replica
@_spi(Kernel) import Simulator

/// The faults one fuzz seed runs under, drawn per seed (swarm testing: each seed turns some
/// faults on, hard, and leaves others off). Printed first in every failure report.
public struct SwarmProfile: Hashable, Sendable, CustomStringConvertible {
  /// The devices, in order.
  public var devices: [String]
  /// The window intents and faults are drawn in, from time zero: 20 s, 2 min, 10 min or 1 h. A
  /// days-long offline window may end after it.
  public var duration: SimDuration
  /// One-way message latency: fixed, or uniform between its bounds.
  public var latency: LatencyModel
  /// The chance that a message is lost: never, or 1 to 10 %.
  public var loss: Probability
  /// The chance that a message is delivered twice: never, or 1 to 5 %.
  public var duplicate: Probability
  /// Server push notifications: on, off, or delivered half the time.
  public var push: PushSetting
  /// The debounce before an automatic sync after a local change (1 s or 200 ms); nil: autosync
  /// off.
  public var autosync: SimDuration?
  /// A retention overriding the policy's; nil, as the generator always leaves it, keeps the
  /// policy's own.
  public var retention: SimDuration?
  /// Per skewed device: its clock's offset from true time and its drift in parts per million;
  /// devices not listed have perfect clocks.
  public var skews: [(device: String, skew: SimDuration, driftPPM: Int64)]
  /// How many short airplane-mode windows (one device each, a second or longer) the timeline has:
  /// 0 to 6.
  public var offlineWindows: Int
  /// Whether one device also goes offline for 8 to 26 days: past a week-long retention, within
  /// the default 30 days.
  public var longOffline: Bool
  /// How many app kills the timeline has: 0 to 3.
  public var kills: Int
  /// How many background windows, each with a budget of 50 ms to 10 s: 0 to 3.
  public var backgroundWindows: Int
  /// How many device clock jumps, each of 1 s to 10 min either way: 0 to 2.
  public var clockJumps: Int
  /// How many server outages: 0 to 2.
  public var outages: Int
  /// The server's conditions drawn for the seed: a nearly full iCloud storage (always freed
  /// before the window ends, as a user who is told frees it), throttling, an atomic zone,
  /// smaller request limits. Defaults when off.
  public var server = ServerConditions()
  /// When the user frees storage (with a quota).
  public var freedAt: SimDuration?
  /// How many `reject` lines (transient CloudKit errors for chosen records): 0 to 2.
  public var rejections = 0
  /// A zone deletion: when, and how (deleted by a device's app, purged in a device's Settings,
  /// or an encrypted-data reset).
  public var zoneDeletion: (time: SimDuration, what: String)?
  /// A device signed out of iCloud for a while, then signed in again.
  public var signedOut: (device: String, from: SimDuration, to: SimDuration)?
  /// Notes filed in folders, whose `on-delete` rule this is; nil without folders.
  public var folders: DeleteRule?
  /// The devices that create the settings singleton at first launch; empty without it.
  public var singleton: [String] = []
  /// A staged rollout of schema version 2: which devices start on version 1 and when each
  /// updates; nil without one.
  public var rollout: String?
  /// With ``WorkloadShape/sharing``: the accounts and what happened to the share, in words.
  public var sharing: String?
  /// How many intents were drawn; a draw that makes no sense (an append with no note of the
  /// device's own) is skipped, so the timeline may have fewer.
  public var intents: Int

  /// The swarm's on/off dimensions, in the order ``dimensions`` reports them.
  public static let dimensionNames = [
    "loss", "duplicates", "skewed clocks", "offline windows", "long offline", "kills", "background windows", "clock jumps",
    "server outages", "quota", "throttled", "reject lines", "atomic zone", "smaller limits", "zone deletion", "signed out",
    "folders", "checked references", "settings singleton", "staged rollout",
  ]

  /// Whether the seed drew each dimension of ``dimensionNames``.
  public var dimensions: [Bool] {
    [
      !loss.isZero, !duplicate.isZero, !skews.isEmpty, offlineWindows > 0, longOffline, kills > 0, backgroundWindows > 0, clockJumps > 0,
      outages > 0, server.quota != nil, server.throttle != nil, rejections > 0, server.atomic,
      server.maxRecordsPerRequest != ServerConditions().maxRecordsPerRequest, zoneDeletion != nil, signedOut != nil,
      folders != nil, server.checksReferences, !singleton.isEmpty, rollout != nil,
    ]
  }

  public static func == (a: SwarmProfile, b: SwarmProfile) -> Bool { a.description == b.description }
  public func hash(into h: inout Hasher) { h.combine(description) }

  var pushText: String {
    switch push {
    case .on: "on"
    case .off: "off"
    case .lossy(let p): "\(p)"
    }
  }

  public var description: String {
    var parts = [
      "devices \(devices.joined(separator: " "))",
      "intents \(intents) over \(duration)",
      "latency \(latency)",
      "loss \(loss)", "duplicate \(duplicate)",
      "push \(pushText)",
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
    if let quota = server.quota {
      parts.append(
        "quota \(ByteCount.format(quota)) used \(ByteCount.format(server.usedByOthers))" + (freedAt.map { " (freed at \($0))" } ?? ""))
    }
    if let t = server.throttle {
      parts.append("throttled" + (t.perDevice.map { " device \($0)" } ?? "") + (t.app.map { " app \($0)" } ?? ""))
    }
    if rejections > 0 { parts.append("reject lines \(rejections)") }
    if server.atomic { parts.append("zone atomic") }
    if let z = zoneDeletion { parts.append("zone \(z.what) at \(z.time)") }
    if let s = signedOut { parts.append("\(s.device) signed out of iCloud \(s.from)..\(s.to)") }
    if server.maxRecordsPerRequest != ServerConditions().maxRecordsPerRequest { parts.append("limits \(server.maxRecordsPerRequest) records") }
    if let folders { parts.append("folders (on-delete \(folders.rawValue)\(server.checksReferences ? ", references checked" : ""))") }
    if !singleton.isEmpty { parts.append("settings singleton made by \(singleton.joined(separator: " "))") }
    if let rollout { parts.append("rollout \(rollout)") }
    if let sharing { parts.append(sharing) }
    return parts.joined(separator: " · ")
  }
}
