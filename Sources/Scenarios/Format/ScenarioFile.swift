import Replica
@_spi(Kernel) import Simulator

/// A place in a scenario file: 1-based line and column.
public struct SourceLocation: Hashable, Sendable, CustomStringConvertible {
  public var line: Int
  public var column: Int
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
  public var field: String
  public var value: Literal
  public var location: SourceLocation
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
  public var time: SimDuration
  public var action: TimelineAction
  public var location: SourceLocation
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

  public enum Comparison: String, Hashable, Sendable { case equal = "==", atMost = "<=", atLeast = ">=" }
}

/// One `expect` line, with its text as written (for reports).
public struct Expectation: Hashable, Sendable {
  public var kind: ExpectationKind
  public var text: String
  public var location: SourceLocation
  public init(kind: ExpectationKind, text: String, location: SourceLocation) {
    self.kind = kind
    self.text = text
    self.location = location
  }
}

/// `clock DEVICE skew ±D [drift ±N ppm]`
public struct ClockSetting: Hashable, Sendable {
  public var device: String
  public var skew: SimDuration
  public var driftPPM: Int64
  public var location: SourceLocation
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
  public var name: String
  public var about: String?
  public var devices: [String]
  public var policy: PolicySpec
  /// Where the `policy` line is (nil when absent: the default preset applies).
  public var policyLocation: SourceLocation?
  public var seed: UInt64
  public var latency: LatencyModel
  public var loss: Probability
  public var duplicate: Probability
  public var clocks: [ClockSetting]
  /// `retention D`: overrides the policy's retention when present.
  public var retention: SimDuration?
  /// `autosync D|off`: debounce after a local change; `nil` = off. Default 1s.
  public var autosync: SimDuration?
  public var push: PushSetting
  public var schema: Schema
  /// Timeline entries sorted by time; equal times keep file order.
  public var timeline: [TimelineEntry]
  public var expectations: [Expectation]

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
