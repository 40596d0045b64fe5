import Foundation
import Scenarios
@_spi(Kernel) import Simulator

/// A fuzz campaign's results file (`--out`): one JSON line per seed, each written with
/// `write(2)` as soon as it is ready, by one campaign at a time.
///
/// Opening it takes an exclusive lock (`flock`), so a second campaign on the same file fails
/// fast. Resuming trusts nothing: every line must be a record of this campaign, seeds in order,
/// none twice, none outside the plan; only a torn last line (a campaign killed mid-write) is cut
/// off and its seed run again.
final class JSONLinesFile: @unchecked Sendable {
  /// Why the file cannot be used, with the exit code that says so.
  struct OpenError: Error, CustomStringConvertible {
    var description: String
    var code: ExitCode
  }

  let path: String
  /// The open file, -1 once closed.
  private var fd: Int32
  private let lock = NSLock()
  /// How many records were already there (resume), and the first and the last of them.
  private(set) var existing: (count: Int, first: FuzzRecord?, last: FuzzRecord?) = (0, nil, nil)
  private var _failure: String?

  /// The first write failure, if a write failed (then nothing more is written).
  var failure: String? { lock.withLock { _failure } }

  /// Opens (and locks) the file; with `resume`, checks every record already there, giving each to
  /// `take` in order — the file is read a piece at a time and no record is kept, so a campaign of
  /// millions of seeds resumes in little memory. `stop` is polled between pieces: a signal while
  /// a long file is checked ends the check (nothing run, nothing written).
  init(
    path: String, resume: Bool, policy: String, scenario: String, plan: SeedPlan, take: (FuzzRecord) -> Void = { _ in },
    stop: () -> Int32? = { nil }
  ) throws(OpenError) {
    self.path = path
    var info = stat()
    if stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFREG {
      throw OpenError(description: "'\(path)' is not a regular file; --out needs a file it can lock, resume and append to", code: .usage)
    }
    // A link to nothing would have its target made (every other output refuses it): refused.
    var link = stat()
    if lstat(path, &link) == 0, link.st_mode & S_IFMT == S_IFLNK, stat(path, &info) != 0 {
      throw OpenError(description: "'\(path)' is a symbolic link to a file that does not exist; give the file itself", code: .usage)
    }
    let fd = open(path, O_RDWR | O_CREAT | O_APPEND, 0o644)
    guard fd >= 0 else { throw OpenError(description: "cannot open '\(path)': \(String(cString: strerror(errno)))", code: .usage) }
    self.fd = fd
    guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
      closeFile()
      throw OpenError(
        description: "'\(path)' is being written by another campaign (it holds the file's lock); wait for it to finish, or use another --out",
        code: .usage)
    }
    if !resume {
      guard lseek(fd, 0, SEEK_END) == 0 else {
        closeFile()
        throw OpenError(description: "'\(path)' already exists; add --resume to continue it, or remove it", code: .usage)
      }
      return
    }
    do throws(OpenError) {
      var check = Check(path: path, policy: policy, scenario: scenario, plan: plan)
      _ = lseek(fd, 0, SEEK_SET)
      var buffer = [UInt8](repeating: 0, count: 1 << 20)
      while true {
        if let signal = stop() {
          throw OpenError(
            description:
              "stopped by \(InterruptWatch.name(signal)) while checking '\(path)' (\(check.count) records read); nothing was run or written: the same command starts over",
            code: InterruptWatch.exitCode(signal))
        }
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
        if n < 0, errno == EINTR { continue }
        if n <= 0 { break }
        try check.feed(buffer[0..<n], take: take)
      }
      let goodLength = try check.finish()
      existing = (check.count, check.first, check.last)
      if goodLength < check.length { _ = ftruncate(fd, off_t(goodLength)) }
    } catch {
      closeFile()
      throw error
    }
  }

  /// The records of `data` (a whole file), and the length up to the last complete line.
  static func check(_ data: [UInt8], path: String, policy: String, scenario: String, plan: SeedPlan) throws(OpenError) -> ([FuzzRecord], Int) {
    var check = Check(path: path, policy: policy, scenario: scenario, plan: plan)
    var records: [FuzzRecord] = []
    try check.feed(data[...]) { records.append($0) }
    return (records, try check.finish())
  }

  /// The resume check, fed the file a piece at a time: every line must be a record of this
  /// campaign, holding the plan's first seeds in order; only a torn last line (a campaign killed
  /// mid-write) is allowed, and cut off.
  struct Check {
    let path: String
    let policy: String
    let scenario: String
    let plan: SeedPlan
    /// Records read, and the first and last.
    private(set) var count = 0
    private(set) var first: FuzzRecord?
    private(set) var last: FuzzRecord?
    /// Bytes fed, and the length up to the last complete line.
    private(set) var length = 0
    private var complete = 0
    /// The start of a line not yet ended.
    private var pending: [UInt8] = []
    // Records are written in seed order with none left out: the file must hold the plan's first
    // seeds, one after the other. (A file of another shard, or with a line taken out, would be
    // continued after its last seed and refused at the next resume.)
    private var expected: UInt64?

    init(path: String, policy: String, scenario: String, plan: SeedPlan) {
      (self.path, self.policy, self.scenario, self.plan) = (path, policy, scenario, plan)
      expected = plan.first
    }

    mutating func feed(_ bytes: ArraySlice<UInt8>, take: (FuzzRecord) -> Void) throws(OpenError) {
      let base = length  // the file's offset of bytes.startIndex
      length += bytes.count
      var start = bytes.startIndex
      while let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
        if pending.isEmpty {
          try line(bytes[start..<newline], take: take)
        } else {
          pending += bytes[start..<newline]
          let whole = pending
          pending = []
          try line(whole[...], take: take)
        }
        complete = base + (newline + 1 - bytes.startIndex)
        start = newline + 1
      }
      pending += bytes[start...]
    }

    /// The length to keep: up to the last complete line.
    func finish() throws(OpenError) -> Int {
      // A line without its newline after records of this campaign: one killed mid-write. Its
      // seed runs again. With no complete record before it, nothing says this campaign wrote
      // the file (a one-line file of something else has no newline either): refused.
      if !pending.isEmpty && count == 0 {
        throw OpenError(
          description:
            "'\(path)' holds no complete fuzz record, only a line without its newline; --resume continues a file this campaign wrote, and will not guess (remove it to start again)",
          code: .dataError)
      }
      return complete
    }

    private mutating func line(_ line: ArraySlice<UInt8>, take: (FuzzRecord) -> Void) throws(OpenError) {
      let number = count + 1
      func refuse(_ why: String) -> OpenError {
        OpenError(
          description: "line \(number) of '\(path)' \(why); --resume continues a file this campaign wrote, and will not guess", code: .dataError)
      }
      guard let record = try? FuzzRecord.decode(jsonLine: line) else { throw refuse("is not a fuzz record") }
      guard record.policy == policy, record.scenario == scenario else {
        throw OpenError(
          description:
            "'\(path)' holds a campaign of policy '\(record.policy)' on '\(record.scenario)', not '\(policy)' on '\(scenario)'; use another --out",
          code: .usage)
      }
      guard record.seed >= plan.lower, record.seed <= plan.upper, plan.shard.map({ record.seed % $0.n == $0.k - 1 }) ?? true else {
        throw refuse("holds seed \(record.seed), which this campaign's --seeds and --shard do not include")
      }
      if let last, record.seed <= last.seed {
        throw refuse(
          record.seed == last.seed
            ? "repeats seed \(record.seed)" : "holds seed \(record.seed) after seed \(last.seed) (records are written in seed order)")
      }
      if let missing = expected, record.seed != missing {
        let after = last.map { "after seed \($0.seed), " } ?? ""
        throw refuse(
          "has no record of seed \(missing): it holds seed \(record.seed) \(after)but a campaign writes every seed of its plan in order, none left out (was it written with another --seeds or --shard, or edited?)"
        )
      }
      expected = plan.seed(after: record.seed)
      if first == nil { first = record }
      last = record
      count += 1
      take(record)
    }
  }

  /// Appends one line; after a failed write, writes nothing more and returns false.
  @discardableResult
  func append(_ line: String) -> Bool {
    lock.withLock {
      guard _failure == nil else { return false }
      guard fd >= 0 else { return false }
      if let reason = AtomicFile.writeAll(line + "\n", to: fd) {
        _failure = reason
        return false
      }
      return true
    }
  }

  /// Closes the file (and gives up its lock) now, not when the last reference goes: a command
  /// run in-process (tests, a tool of one's own) may open it again at once. Nothing more is
  /// written after it.
  func finish() { lock.withLock { closeFile() } }

  /// Closes the descriptor once: a throwing `init` closes it, and `deinit` then finds it closed
  /// (closing it twice could close a descriptor another thread had opened since).
  private func closeFile() {
    if fd >= 0 { close(fd) }
    fd = -1
  }

  deinit { closeFile() }
}
