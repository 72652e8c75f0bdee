/// ECMA-262's backtracking matcher: captures, backreferences, lookarounds, greedy and lazy loops.
///
/// The pattern compiles once to a small instruction list run with an explicit stack, directly over a
/// string's UTF-8 bytes (decoding scalars as it goes), so matching allocates little and cannot overflow
/// the call stack however long the string. Backtracking can take exponential time (`^(a+)+$`), so
/// every run has a step budget: instructions executed plus scalars scanned by repeats and
/// backreferences, and at most `maxFrames` entries on its stack.
struct RegexBacktracker: Sendable {
    enum Instruction: Sendable {
        case atom(RegexAtom)
        /// A single-scalar atom repeated `min...max` times, without per-iteration bookkeeping.
        case repeatAtom(RegexAtom, min: Int, max: Int, greedy: Bool)
        /// Continue at the first target; on failure, at the second.
        case split(Int, Int)
        case jump(Int)
        case save(Int)
        case lineStart
        case lineEnd
        case wordBoundary(negated: Bool)
        /// Starts a general loop: iteration count 0.
        case loopInit(Int)
        /// Decides whether to run the body (at +1) again or continue at `exit`.
        case loopTest(register: Int, min: Int, max: Int, greedy: Bool, exit: Int)
        /// Records where the iteration starts (for the empty-iteration rule).
        case loopEnter(Int)
        /// Ends an iteration: fails if it consumed nothing past `min`, else counts it and jumps to `test`.
        case loopNext(register: Int, min: Int, test: Int)
        /// A lookaround whose body starts at +1 and ends with `lookMatch`; continues at `end`.
        case look(behind: Bool, negated: Bool, end: Int)
        case lookMatch(behind: Bool)
        case backreference(Int)
        case match
    }

    /// Most entries the backtracking stack may hold (about 32 MiB).
    static let maxFrames = 1 << 20

    private let program: [Instruction]
    private let captureSlots: Int
    private let registers: Int

    init(_ tree: RegexNode, groups: Int) {
        var builder = Builder()
        builder.emit(tree)
        builder.code.append(.match)
        program = builder.code
        captureSlots = 2 * (groups + 1)
        registers = builder.registers
    }

    /// Searches `bytes` (valid UTF-8) within `budget` steps; only at offset 0 when `anchored`, and
    /// only at `firstByte` when given.
    func search(_ bytes: UnsafeBufferPointer<UInt8>, anchored: Bool, firstByte: UInt8?, budget: Int) -> RegexResult {
        var machine = Machine(program: program, bytes: bytes, captureSlots: captureSlots, registers: registers, budget: budget)
        var start = 0
        while true {
            if let firstByte {
                while start < bytes.count && bytes[start] != firstByte { start += 1 }
                if start == bytes.count { return .notMatched }
            }
            if machine.run(from: 0, at: start) { return .matched }
            if machine.exhausted { return .overBudget(steps: budget) }
            if anchored || start >= bytes.count { return .notMatched }
            start += bytes.scalarLength(at: start)
        }
    }

    /// Turns the syntax tree into instructions.
    private struct Builder {
        var code: [Instruction] = []
        var registers = 0

        /// Appends the instructions for `node`.
        mutating func emit(_ node: RegexNode) {
            switch node {
            case .empty:
                break
            case .atom(let a):
                code.append(.atom(a))
            case .lineStart:
                code.append(.lineStart)
            case .lineEnd:
                code.append(.lineEnd)
            case .wordBoundary(let negated):
                code.append(.wordBoundary(negated: negated))
            case .group(let body, let capture):
                if let k = capture { code.append(.save(2 * k)) }
                emit(body)
                if let k = capture { code.append(.save(2 * k + 1)) }
            case .sequence(let nodes):
                for n in nodes { emit(n) }
            case .alternation(let alternatives):
                var jumps: [Int] = []
                for (index, alternative) in alternatives.enumerated() {
                    if index == alternatives.count - 1 {
                        emit(alternative)
                    } else {
                        let split = code.count
                        code.append(.jump(0))
                        emit(alternative)
                        jumps.append(code.count)
                        code.append(.jump(0))
                        code[split] = .split(split + 1, code.count)
                    }
                }
                for j in jumps { code[j] = .jump(code.count) }
            case .quantified(let body, let min, let max, let greedy):
                emitQuantified(body, min: min, max: max ?? Int.max, greedy: greedy)
            case .look(let body, let behind, let negated):
                let start = code.count
                code.append(.jump(0))
                emit(body)
                code.append(.lookMatch(behind: behind))
                code[start] = .look(behind: behind, negated: negated, end: code.count)
            case .backreference(let n):
                code.append(.backreference(n))
            }
        }

        private mutating func emitQuantified(_ body: RegexNode, min: Int, max: Int, greedy: Bool) {
            if max == 0 { return }
            if case .atom(let a) = body {
                code.append(.repeatAtom(a, min: min, max: max, greedy: greedy))
                return
            }
            if min == 1 && max == 1 {
                emit(body)
                return
            }
            let register = registers
            registers += 1
            code.append(.loopInit(register))
            let test = code.count
            code.append(.jump(0))
            code.append(.loopEnter(register))
            emit(body)
            code.append(.loopNext(register: register, min: min, test: test))
            code[test] = .loopTest(register: register, min: min, max: max, greedy: greedy, exit: code.count)
        }
    }
}

/// The backtracking machine for one search.
private struct Machine {
    typealias Instruction = RegexBacktracker.Instruction

    /// What to do when the current path fails.
    enum Frame {
        case branch(pc: Int, pos: Int)
        case restoreCapture(slot: Int, value: Int)
        case restoreCount(register: Int, value: Int)
        case restoreStart(register: Int, value: Int)
        /// Greedy `repeatAtom` at `pc`: retry its continuation one scalar shorter (not below `floor`).
        case retreat(pc: Int, pos: Int, floor: Int)
        /// Lazy `repeatAtom` at `pc`: retry its continuation one scalar longer (at most `remaining`).
        case advance(pc: Int, pos: Int, remaining: Int)
    }

    let program: [Instruction]
    let bytes: UnsafeBufferPointer<UInt8>
    var captures: [Int]
    var counts: [Int]
    var starts: [Int]
    var stack: [Frame] = []
    /// Where the innermost lookbehind body must end.
    var lookbehindEnd = 0
    /// Steps left before the run gives up.
    var budget: Int
    /// Whether the budget ran out (every `run` then fails at once).
    var exhausted = false

    init(program: [Instruction], bytes: UnsafeBufferPointer<UInt8>, captureSlots: Int, registers: Int, budget: Int) {
        self.program = program
        self.bytes = bytes
        self.budget = budget
        captures = captureSlots > 2 ? Array(repeating: -1, count: captureSlots) : []
        counts = registers > 0 ? Array(repeating: 0, count: registers) : []
        starts = counts
    }

    /// The byte offset after `atom` matched at `pos`, or `nil`.
    func step(_ atom: RegexAtom, _ pos: Int) -> Int? {
        guard pos < bytes.count else { return nil }
        let b = bytes[pos]
        if b < 0x80 {
            return atom.matches(UInt32(b)) ? pos + 1 : nil
        }
        let (c, length) = bytes.scalar(at: pos)
        return atom.matches(c) ? pos + length : nil
    }

    /// The start of the scalar before byte offset `pos`.
    func previousBoundary(_ pos: Int) -> Int {
        var p = pos - 1
        while p > 0 && bytes[p] & 0xC0 == 0x80 { p -= 1 }
        return p
    }

    /// Whether the byte at `pos` exists and is an ASCII word character (for `\b`).
    func isWordByte(_ pos: Int) -> Bool {
        guard pos >= 0 && pos < bytes.count else { return false }
        return ScalarSet.isWord(UInt32(bytes[pos]))
    }

    /// Runs from instruction `pc` at byte `pos` until `match` (true), every path failed or the budget
    /// ran out (false; `exhausted` tells which).
    mutating func run(from startPC: Int, at startPos: Int) -> Bool {
        let base = stack.count
        var pc = startPC, pos = startPos
        while true {
            budget -= 1
            if budget < 0 || stack.count > RegexBacktracker.maxFrames {
                exhausted = true
                stack.removeSubrange(base...)
                return false
            }
            var failed = false
            switch program[pc] {
            case .atom(let a):
                if let next = step(a, pos) {
                    pos = next
                    pc += 1
                } else {
                    failed = true
                }
            case .repeatAtom(let a, let min, let max, let greedy):
                var p = pos, n = 0
                while n < min, let next = step(a, p) {
                    p = next
                    n += 1
                }
                if n < min {
                    failed = true
                } else if greedy {
                    let floor = p
                    while n < max, let next = step(a, p) {
                        p = next
                        n += 1
                    }
                    budget -= n
                    if p > floor { stack.append(.retreat(pc: pc, pos: p, floor: floor)) }
                    pos = p
                    pc += 1
                } else {
                    budget -= n
                    if max > min { stack.append(.advance(pc: pc, pos: p, remaining: max - min)) }
                    pos = p
                    pc += 1
                }
            case .split(let first, let second):
                stack.append(.branch(pc: second, pos: pos))
                pc = first
            case .jump(let target):
                pc = target
            case .save(let slot):
                stack.append(.restoreCapture(slot: slot, value: captures[slot]))
                captures[slot] = pos
                pc += 1
            case .lineStart:
                if pos == 0 { pc += 1 } else { failed = true }
            case .lineEnd:
                if pos == bytes.count { pc += 1 } else { failed = true }
            case .wordBoundary(let negated):
                if (isWordByte(pos - 1) != isWordByte(pos)) != negated { pc += 1 } else { failed = true }
            case .loopInit(let r):
                stack.append(.restoreCount(register: r, value: counts[r]))
                counts[r] = 0
                pc += 1
            case .loopTest(let r, let min, let max, let greedy, let exit):
                let c = counts[r]
                if c < min {
                    pc += 1
                } else if c >= max {
                    pc = exit
                } else if greedy {
                    stack.append(.branch(pc: exit, pos: pos))
                    pc += 1
                } else {
                    stack.append(.branch(pc: pc + 1, pos: pos))
                    pc = exit
                }
            case .loopEnter(let r):
                stack.append(.restoreStart(register: r, value: starts[r]))
                starts[r] = pos
                pc += 1
            case .loopNext(let r, let min, let test):
                if pos == starts[r] && counts[r] >= min {
                    failed = true
                } else {
                    stack.append(.restoreCount(register: r, value: counts[r]))
                    counts[r] += 1
                    pc = test
                }
            case .look(let behind, let negated, let end):
                let found = lookaround(body: pc + 1, behind: behind, at: pos)
                if exhausted {
                    stack.removeSubrange(base...)
                    return false
                }
                if found != negated { pc = end } else { failed = true }
            case .lookMatch(let behind):
                if behind && pos != lookbehindEnd {
                    failed = true
                } else {
                    stack.removeSubrange(base...)
                    return true
                }
            case .backreference(let n):
                let from = captures.isEmpty ? -1 : captures[2 * n], to = captures.isEmpty ? -1 : captures[2 * n + 1]
                if from < 0 || to < 0 {
                    pc += 1
                } else {
                    let length = to - from
                    let fits = pos + length <= bytes.count
                    if fits { budget -= length }
                    if fits && (0..<length).allSatisfy({ bytes[from + $0] == bytes[pos + $0] }) {
                        pos += length
                        pc += 1
                    } else {
                        failed = true
                    }
                }
            case .match:
                stack.removeSubrange(base...)
                return true
            }
            guard failed else { continue }
            // Backtrack: undo bookkeeping until an alternative path is found.
            var resumed = false
            while !resumed, stack.count > base {
                switch stack.removeLast() {
                case .branch(let target, let at):
                    pc = target
                    pos = at
                    resumed = true
                case .restoreCapture(let slot, let value):
                    captures[slot] = value
                case .restoreCount(let r, let value):
                    counts[r] = value
                case .restoreStart(let r, let value):
                    starts[r] = value
                case .retreat(let at, let p, let floor):
                    let shorter = previousBoundary(p)
                    if shorter > floor { stack.append(.retreat(pc: at, pos: shorter, floor: floor)) }
                    pc = at + 1
                    pos = shorter
                    resumed = true
                case .advance(let at, let p, let remaining):
                    guard case .repeatAtom(let a, _, _, _) = program[at], let longer = step(a, p) else { continue }
                    if remaining > 1 { stack.append(.advance(pc: at, pos: longer, remaining: remaining - 1)) }
                    pc = at + 1
                    pos = longer
                    resumed = true
                }
            }
            if !resumed { return false }
        }
    }

    /// Whether the lookaround body at `body` matches at `pos` (ahead) or ending at `pos` (behind).
    mutating func lookaround(body: Int, behind: Bool, at pos: Int) -> Bool {
        guard behind else { return run(from: body, at: pos) }
        let saved = lookbehindEnd
        defer { lookbehindEnd = saved }
        lookbehindEnd = pos
        var start = pos
        while true {
            if run(from: body, at: start) { return true }
            if start == 0 || exhausted { return false }
            start = previousBoundary(start)
        }
    }
}
