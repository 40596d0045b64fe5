import Replica
@_spi(Kernel) import Simulator

/// A place in a scenario file: 1-based line and column.
public struct SourceLocation: Hashable, Sendable, CustomStringConvertible {
  /// The 1-based line number; 0 for lines made in code (generated and shrunk scenarios).
  public var line: Int
  /// The 1-based column, counting the line's `Character`s as written; 0 for lines made in code.
  public var column: Int
  /// The place at `line` and `column`, both 1-based.
  public init(line: Int, column: Int) {
    self.line = line
    self.column = column
  }
  public var description: String { "\(line):\(column)" }
}

/// A literal as written in a scenario: `"text"`, `42`, `true`, `1.5s` (for `date` fields), or a
/// bare identifier (a record id, for `ref` fields).
public enum Literal: Hashable, Sendable, CustomStringConvertible {
  case string(String)
  case int(Int64)
  case bool(Bool)
  case duration(SimDuration)
  case identifier(String)

  /// The literal as it would be written back into a scenario file.
  public var description: String {
    switch self {
    case .string(let s):
      // Scalar by scalar: a quote followed by a combining mark is still a quote to escape.
      var out = "\""
      for scalar in s.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        default: out.unicodeScalars.append(scalar)
        }
      }
      return out + "\""
    case .int(let i): return String(i)
    case .bool(let b): return b ? "true" : "false"
    case .duration(let d): return d.description
    case .identifier(let id): return id
    }
  }
}

/// One `field=LITERAL` assignment.
public struct Assignment: Hashable, Sendable {
  /// The field's name in the record's type.
  public var field: String
  /// The literal assigned, as written; the parser has checked that it fits the field.
  public var value: Literal
  /// Where the assignment starts in the file.
  public var location: SourceLocation
  /// An assignment of `value` to `field`, found at `location`.
  public init(field: String, value: Literal, location: SourceLocation) {
    self.field = field
    self.value = value
    self.location = location
  }
}

/// What happens at one `at TIME` line.
public enum TimelineAction: Hashable, Sendable {
  // Device intents.
  case create(device: String, type: String, id: String, fields: [Assignment])
  case set(device: String, id: String, fields: [Assignment])
  case append(device: String, id: String, field: String, text: String)
  case replace(device: String, id: String, field: String, old: String, new: String)
  case delete(device: String, id: String)
  // Device events.
  case sync(device: String)
  case kill(device: String)
  case background(device: String, budget: SimDuration)
  case clockJump(device: String, by: SimDuration)
  // World events.
  case syncAll
  case offline([String])
  case online([String])
  case serverDown
  case serverUp
  /// `at TIME settle`: heal everything, run to quiescence, judge. Ends the timeline.
  case settle
}

/// One `at TIME ACTION` line.
public struct TimelineEntry: Hashable, Sendable {
  /// When the action happens: the offset from the start of the simulation (`at 1.5s`).
  public var time: SimDuration
  /// What happens.
  public var action: TimelineAction
  /// Where the `at` line is in the file.
  public var location: SourceLocation
  /// A timeline line doing `action` at `time`, found at `location`.
  public init(time: SimDuration, action: TimelineAction, location: SourceLocation) {
    self.time = time
    self.action = action
    self.location = location
  }
}

/// What an `expect` line asks.
public enum ExpectationKind: Hashable, Sendable {
  /// `expect no violations`
  case noViolations
  /// `expect no KIND` (kind in kebab-case, e.g. `lost-edit`)
  case none(kind: String)
  /// `expect KIND == N`, `<=`, `>=`
  case count(kind: String, comparison: Comparison, value: Int)
  /// `expect converged`
  case converged
  /// `expect ID.field == LITERAL`
  case fieldEquals(id: String, field: String, value: Literal)
  /// `expect ID.field in LITERAL...`
  case fieldIn(id: String, field: String, values: [Literal])
  /// `expect ID exists`
  case exists(id: String)
  /// `expect ID deleted`
  case deleted(id: String)

  /// The comparison of `expect KIND == N` (or `<=`, `>=`); the raw value is the operator as written.
  public enum Comparison: String, Hashable, Sendable {
    case equal = "=="
    case atMost = "<="
    case atLeast = ">="
  }
}

/// One `expect` line, with its text as written (for reports).
public struct Expectation: Hashable, Sendable {
  /// What the line asks.
  public var kind: ExpectationKind
  /// The line as written, trimmed and without its comment; reports quote it.
  public var text: String
  /// Where the `expect` line is in the file.
  public var location: SourceLocation
  /// An expectation of `kind`, quoted as `text`, found at `location`.
  public init(kind: ExpectationKind, text: String, location: SourceLocation) {
    self.kind = kind
    self.text = text
    self.location = location
  }
}

/// `clock DEVICE skew ±D [drift ±N ppm]`
public struct ClockSetting: Hashable, Sendable {
  /// The device whose clock this sets.
  public var device: String
  /// The clock's offset from true time at time zero; negative when it is behind.
  public var skew: SimDuration
  /// The clock's rate error in parts per million: microseconds gained per true second (negative:
  /// lost); 0 when the line has no `drift`.
  public var driftPPM: Int64
  /// Where the `clock` line is in the file.
  public var location: SourceLocation
  /// A clock setting for `device`, found at `location`.
  public init(device: String, skew: SimDuration, driftPPM: Int64, location: SourceLocation) {
    self.device = device
    self.skew = skew
    self.driftPPM = driftPPM
    self.location = location
  }
}

/// `push on|off|P%`
public enum PushSetting: Hashable, Sendable {
  case on
  case off
  /// Delivered with this probability (lossy).
  case lossy(Probability)
}

/// A whole scenario file, checked: every name it uses is declared, every literal fits its field.
/// The parser builds it; the runner turns it into a world.
public struct ScenarioFile: Hashable, Sendable {
  /// The path or name it was loaded from, for diagnostics and reproduction commands.
  public var source: String
  /// The scenario's name for reports and reproduction commands: the `scenario` line, else the
  /// file name without its directory and `.scenario`.
  public var name: String
  /// The `about` line's one-line description (`sim-cli list` shows it); nil without one.
  public var about: String?
  /// The device names in the order of the `devices` line; a device's index here is its index in
  /// the run.
  public var devices: [String]
  /// The sync policy: the `policy` line's preset and overrides, or `cloudkit-default` without one.
  public var policy: PolicySpec
  /// Where the `policy` line is (nil when absent: the default preset applies).
  public var policyLocation: SourceLocation?
  /// The seed the run's random streams are drawn from (`seed N`, default 1); the same seed replays
  /// the same run.
  public var seed: UInt64
  /// How long one message takes one way (`latency`); default uniform over 20ms..300ms.
  public var latency: LatencyModel
  /// The chance that a message is lost (`loss P%`); default never.
  public var loss: Probability
  /// The chance that a message is delivered twice (`duplicate P%`); default never.
  public var duplicate: Probability
  /// The `clock` lines, at most one per device; a device without one has a perfect clock.
  public var clocks: [ClockSetting]
  /// `retention D`: overrides the policy's retention when present.
  public var retention: SimDuration?
  /// `autosync D|off`: debounce after a local change; `nil` = off. Default 1s.
  public var autosync: SimDuration?
  /// Server push notifications (`push`): on (the default), off, or delivered with a probability.
  public var push: PushSetting
  /// The record types of the `type` blocks, and the `deployed` list.
  public var schema: Schema
  /// Timeline entries sorted by time; equal times keep file order.
  public var timeline: [TimelineEntry]
  /// The `expect` lines in file order; with none, `expect no violations` applies.
  public var expectations: [Expectation]

  /// A scenario built in code, with the file format's defaults (seed 1, latency 20ms..300ms, no
  /// loss or duplication, autosync 1s, push on). Nothing is checked: names must be declared,
  /// literals must fit, and `timeline` must already be sorted by time, as the parser guarantees.
  public init(
    source: String, name: String, about: String? = nil, devices: [String], policy: PolicySpec, policyLocation: SourceLocation? = nil,
    seed: UInt64 = 1, latency: LatencyModel = .uniform(.milliseconds(20), .milliseconds(300)), loss: Probability = .never,
    duplicate: Probability = .never, clocks: [ClockSetting] = [], retention: SimDuration? = nil, autosync: SimDuration? = .seconds(1),
    push: PushSetting = .on, schema: Schema, timeline: [TimelineEntry], expectations: [Expectation]
  ) {
    self.source = source
    self.name = name
    self.about = about
    self.devices = devices
    self.policy = policy
    self.policyLocation = policyLocation
    self.seed = seed
    self.latency = latency
    self.loss = loss
    self.duplicate = duplicate
    self.clocks = clocks
    self.retention = retention
    self.autosync = autosync
    self.push = push
    self.schema = schema
    self.timeline = timeline
    self.expectations = expectations
  }
}
