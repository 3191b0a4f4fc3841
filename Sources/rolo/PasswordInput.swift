import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads passwords from stdin or a no-echo terminal prompt; never from the command line,
/// where they would land in shell history and `ps`.
enum PasswordInput {
    /// Without `fromStdin` on a stdin that is not a terminal (a script's pipe, /dev/null),
    /// two matching lines are still read as prompt and repeat; a missing or empty one says
    /// to use `--password-stdin` rather than "the passwords do not match".
    static func read(fromStdin: Bool, prompt: String = "Password: ") throws -> String {
        if fromStdin {
            guard let password = readLine(strippingNewline: true), !password.isEmpty else {
                throw CLIError("No password on stdin: --password-stdin reads the password from the first line of stdin, and there was none.")
            }
            return password
        }
        let terminal = isatty(STDIN_FILENO) == 1
        let pipeHint = "stdin is not a terminal to prompt on; to give the password on stdin, use --password-stdin "
            + "(echo 'secret' | rolo user add NAME --password-stdin)."
        guard let first = promptWithoutEcho(prompt), !first.isEmpty else {
            throw CLIError(terminal ? "The password must not be empty." : "No password: " + pipeHint)
        }
        guard let second = promptWithoutEcho("Repeat password: ") else {
            throw CLIError(terminal ? "No password repeated." : "The password was not repeated: " + pipeHint)
        }
        guard second == first else { throw CLIError("The passwords do not match.") }
        return first
    }

    private static func promptWithoutEcho(_ prompt: String) -> String? {
        FileHandle.standardError.write(Data(prompt.utf8))
        var original = termios()
        let isTerminal = tcgetattr(STDIN_FILENO, &original) == 0
        if isTerminal {
            var silent = original
            silent.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSANOW, &silent)
        }
        defer {
            if isTerminal {
                tcsetattr(STDIN_FILENO, TCSANOW, &original)
                FileHandle.standardError.write(Data("\n".utf8))
            }
        }
        return readLine(strippingNewline: true)
    }
}
