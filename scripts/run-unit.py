#!/usr/bin/env python3
"""Runs a systemd service unit's program without systemd, and checks a trace of it against the
unit's restrictions: for machines where systemd is not PID 1 (containers, CI sandboxes), so that
a package test can still run a service as its installed unit says.

  run-unit.py run UNIT_FILE [--trace FILE] [--exec PROGRAM [ARGS...]]
      Runs ExecStart= (or PROGRAM with the unit's environment, for one-off commands such as
      `presencectl migrate`) as systemd would set it up: User= and Group= (setpriv, with the
      supplementary groups of the user, no new privileges, the bounding and ambient capability
      sets of CapabilityBoundingSet= and AmbientCapabilities=), UMask=, Environment= then
      EnvironmentFile= (which overrides it), StateDirectory= (made under /var/lib, owned by the
      user, StateDirectoryMode=, passed as $STATE_DIRECTORY), LoadCredential= (copied to
      /run/credentials/UNIT/, passed as $CREDENTIALS_DIRECTORY and %d), and ExecStart='s own
      expansion ("${VAR}" one word, "$VAR" split on spaces). SIGTERM and SIGINT are passed on; it
      exits with the program's status. With --trace, the program runs under `strace -f` (started
      as the unit's user, so only the program is traced) and the trace is written to FILE.
      Sandboxing settings (ProtectSystem=, SystemCallFilter=...) are not applied: `check` reads the
      trace against them instead.

  run-unit.py check UNIT_FILE TRACE [--harmless SYSCALL]...
      Reads a trace from `run --trace` and prints each thing the program did that the unit's
      restrictions would refuse, one a line, then exits 1 if there was any: a system call that
      SystemCallFilter= refuses (its groups expanded by `systemd-analyze syscall-filter`) and that
      is not named --harmless (a call the program makes but does without), a socket of a family
      outside RestrictAddressFamilies=, writable and executable memory (MemoryDenyWriteExecute=),
      a file opened for writing outside StateDirectory=, /tmp, /var/tmp, /dev, /proc and /sys
      (ProtectSystem=strict), kernel settings written (ProtectKernelTunables=), a /proc file that
      is not a process's (ProcSubset=pid), a path under /home, /root or /run/user (ProtectHome=).
      It prints "trace meets the unit: N system calls, ..." otherwise.
"""
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(2)


def read_unit(path):
    """The unit's [Service] settings: each key with its values in order (a key may repeat)."""
    settings = {}
    section = None
    with open(path, encoding="utf-8") as unit:
        lines = unit.read().replace("\\\n", " ").splitlines()
    for line in lines:
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        if section != "Service" or "=" not in line:
            continue
        key, value = line.split("=", 1)
        settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def last(settings, key, default=None):
    values = settings.get(key)
    return values[-1] if values else default


def words(value):
    """A setting's space-separated words, with double quotes honoured."""
    return re.findall(r'"[^"]*"|\S+', value)


def read_environment_file(path):
    """KEY=VALUE lines as systemd reads them: comments and blank lines skipped, quotes removed."""
    env = {}
    with open(path, encoding="utf-8") as file:
        for line in file:
            line = line.strip()
            if not line or line[0] in "#;" or "=" not in line:
                continue
            key, value = line.split("=", 1)
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            env[key.strip()] = value
    return env


def expand_specifiers(text, unit_name, credentials):
    def one(match):
        letter = match.group(1)
        if letter == "%":
            return "%"
        if letter == "d":
            return credentials
        if letter == "n":
            return unit_name
        fail(f"specifier %{letter} is not supported by run-unit.py")
    return re.sub(r"%(.)", one, text)


def expand_command(line, env):
    """ExecStart='s expansion: ${VAR} stays one word, $VAR splits on whitespace."""
    result = []
    for word in words(line):
        if word.startswith('"') and word.endswith('"'):
            word = word[1:-1]
        whole = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
        if whole:
            result.extend(env.get(whole.group(1), "").split())
            continue
        result.append(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda m: env.get(m.group(1), ""), word))
    return result


def capabilities(value):
    return ",".join("+" + cap.lower().removeprefix("cap_") for cap in value.split())


def run(unit_path, trace, program):
    settings = read_unit(unit_path)
    unit_name = os.path.basename(unit_path)
    user = last(settings, "User") or fail(f"{unit_path} has no User=: run-unit.py runs services as their own user")
    group = last(settings, "Group", user)
    account = pwd.getpwnam(user)
    credentials = f"/run/credentials/{unit_name}"

    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "USER": user,
           "LOGNAME": user, "HOME": account.pw_dir, "SHELL": account.pw_shell}
    for value in settings.get("Environment", []):
        for word in words(expand_specifiers(value, unit_name, credentials)):
            key, _, val = word.strip('"').partition("=")
            env[key] = val
    for value in settings.get("EnvironmentFile", []):
        optional = value.startswith("-")
        path = value.lstrip("-")
        if os.path.exists(path):
            env.update(read_environment_file(path))
        elif not optional:
            fail(f"{path} (EnvironmentFile= of {unit_name}) does not exist")

    for name in " ".join(settings.get("StateDirectory", [])).split():
        folder = f"/var/lib/{name}"
        os.makedirs(folder, exist_ok=True)
        shutil.chown(folder, user, group)
        os.chmod(folder, int(last(settings, "StateDirectoryMode", "0755"), 8))
        env["STATE_DIRECTORY"] = ":".join(filter(None, [env.get("STATE_DIRECTORY"), folder]))

    loads = settings.get("LoadCredential", [])
    if loads:
        os.makedirs(credentials, exist_ok=True)
        for value in loads:
            ident, _, source = value.partition(":")
            target = os.path.join(credentials, ident)
            shutil.copyfile(source, target)
            shutil.chown(target, user, group)
            os.chmod(target, 0o400)
        shutil.chown(credentials, user, group)
        os.chmod(credentials, 0o500)
        env["CREDENTIALS_DIRECTORY"] = credentials

    command = program or expand_command(expand_specifiers(last(settings, "ExecStart") or fail(f"{unit_name} has no ExecStart="),
                                                          unit_name, credentials).lstrip("-@:+!"), env)
    if trace:
        command = ["strace", "-f", "-qq", "-s", "256", "-o", trace] + command
    bounding = last(settings, "CapabilityBoundingSet")
    setpriv = ["setpriv", f"--reuid={user}", f"--regid={group}", "--init-groups", "--no-new-privs"]
    if bounding is not None:
        setpriv.append("--bounding-set=-all" + ("," + capabilities(bounding) if bounding else ""))
    ambient = " ".join(settings.get("AmbientCapabilities", []))
    if ambient:
        setpriv += [f"--inh-caps=-all,{capabilities(ambient)}", f"--ambient-caps=-all,{capabilities(ambient)}"]
    umask = last(settings, "UMask")
    if umask:
        os.umask(int(umask, 8))
    working = last(settings, "WorkingDirectory", "/")
    child = subprocess.Popen(setpriv + ["--"] + command, env=env, cwd=working.lstrip("-"))
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda number, _: child.send_signal(number))
    status = child.wait()
    if loads:
        shutil.rmtree(credentials, ignore_errors=True)
    sys.exit(status if status >= 0 else 128 - status)


def syscall_groups():
    """Every group of `systemd-analyze syscall-filter`, with its members (calls and groups)."""
    output = subprocess.run(["systemd-analyze", "syscall-filter"], check=True, capture_output=True, text=True).stdout
    groups = {}
    current = None
    for line in output.splitlines():
        if line.startswith("@"):
            current = groups.setdefault(line.strip(), set())
        elif current is not None and line.strip() and not line.strip().startswith("#"):
            current.add(line.strip())
    return groups


def expand(names, groups, seen=None):
    seen = seen if seen is not None else set()
    calls = set()
    for name in names:
        if name.startswith("@"):
            if name in seen:
                continue
            seen.add(name)
            calls |= expand(groups.get(name) or fail(f"unknown system call group {name}"), groups, seen)
        else:
            calls.add(name)
    return calls


def refused_syscall(settings):
    """Whether SystemCallFilter= refuses a call, as systemd reads the settings in order: the first
    one makes an allow list (or a deny list, with ~); later ones add to it or take from it."""
    groups = syscall_groups()
    allow, calls = None, set()
    for value in settings.get("SystemCallFilter", []):
        deny = value.startswith("~")
        names = expand(value.lstrip("~").split(), groups)
        if allow is None:
            allow, calls = not deny, names
        elif allow != deny:
            calls |= names
        else:
            calls -= names
    if allow is None:
        return lambda name: False
    return (lambda name: name not in calls) if allow else (lambda name: name in calls)


CALL = re.compile(r"^(\d+)\s+(<\.\.\. )?([a-z0-9_]+)(?:\(| resumed>)(.*)$")


def check(unit_path, trace_path, harmless):
    settings = read_unit(unit_path)
    refused = refused_syscall(settings)
    families = set(" ".join(settings.get("RestrictAddressFamilies", [])).split())
    states = [f"/var/lib/{name}" for name in " ".join(settings.get("StateDirectory", [])).split()]
    writable = states + ["/tmp/", "/var/tmp/", "/dev/"]
    problems = []
    calls = set()
    lines = 0

    def problem(text):
        if text not in problems:
            problems.append(text)

    with open(trace_path, encoding="utf-8", errors="replace") as trace:
        for line in trace:
            match = CALL.match(line)
            if not match:
                continue
            lines += 1
            resumed, name, rest = match.group(2), match.group(3), match.group(4)
            calls.add(name)
            if resumed:  # the arguments were on the call's first line
                continue
            if name == "socket" and families:
                family = rest.split(",", 1)[0].strip()
                if family not in families:
                    problem(f"RestrictAddressFamilies= refuses socket({family})")
            if settings.get("MemoryDenyWriteExecute", ["no"])[-1] == "yes":
                if name in ("mmap", "mmap2") and "PROT_WRITE" in rest and "PROT_EXEC" in rest:
                    problem(f"MemoryDenyWriteExecute= refuses writable and executable memory: {name}({rest[:80]}")
                if name in ("mprotect", "pkey_mprotect") and "PROT_EXEC" in rest:
                    problem(f"MemoryDenyWriteExecute= refuses making memory executable: {name}({rest[:80]}")
            path = re.match(r'(?:AT_FDCWD, )?"([^"]*)"', rest)
            if name in ("open", "openat", "creat") and path and re.search(r"O_WRONLY|O_RDWR|O_CREAT", rest):
                target = path.group(1)
                # /proc, /sys and /dev stay writable under ProtectSystem= (a thread's name in
                # /proc/self/task/*/comm): ProtectKernelTunables= guards their kernel settings.
                if last(settings, "ProtectSystem") == "strict" and not re.match(r"/(proc|sys)/", target) \
                        and not any(target.startswith(w) for w in writable):
                    problem(f"ProtectSystem=strict refuses writing {target}")
                if last(settings, "ProtectKernelTunables") == "yes" and re.match(r"/(proc/sys|sys)/", target):
                    problem(f"ProtectKernelTunables=yes refuses writing {target}")
            if path and name in ("open", "openat", "stat", "newfstatat", "statx", "access", "faccessat", "faccessat2", "readlink", "readlinkat"):
                target = path.group(1)
                if last(settings, "ProcSubset") == "pid" and target.startswith("/proc/") \
                        and not re.match(r"/proc/(self|thread-self|\d+)(/|$)", target):
                    problem(f"ProcSubset=pid hides {target}")
                if last(settings, "ProtectHome") == "yes" and re.match(r"/(home|root|run/user)(/|$)", target):
                    problem(f"ProtectHome=yes hides {target}")
    for name in sorted(calls):
        if refused(name) and name not in harmless:
            problem(f"SystemCallFilter= refuses {name}")
    if lines == 0:
        problem(f"{trace_path} holds no system calls: not a trace of run-unit.py run --trace")
    for text in problems:
        print(text)
    if problems:
        sys.exit(1)
    known = sorted(name for name in calls if refused(name) and name in harmless)
    print(f"trace meets the unit: {len(calls)} system calls, {lines} calls traced"
          + (f"; refused as harmless: {', '.join(known)}" if known else ""))


def main(argv):
    if len(argv) >= 2 and argv[0] == "run":
        unit, rest = argv[1], argv[2:]
        trace = None
        if rest[:1] == ["--trace"]:
            if len(rest) < 2:
                fail("--trace needs a file")
            trace, rest = rest[1], rest[2:]
        program = None
        if rest[:1] == ["--exec"]:
            program = rest[1:] or fail("--exec needs a program")
        elif rest:
            fail(f"unexpected '{rest[0]}': expected --trace FILE or --exec PROGRAM [ARGS...]")
        run(unit, trace, program)
    elif len(argv) >= 3 and argv[0] == "check":
        harmless, rest = set(), argv[3:]
        while rest[:1] == ["--harmless"] and len(rest) >= 2:
            harmless.add(rest[1])
            rest = rest[2:]
        if rest:
            fail(f"unexpected '{rest[0]}': expected --harmless SYSCALL")
        check(argv[1], argv[2], harmless)
    else:
        fail("usage: run-unit.py run UNIT_FILE [--trace FILE] [--exec PROGRAM [ARGS...]] | check UNIT_FILE TRACE [--harmless SYSCALL]...")


if __name__ == "__main__":
    main(sys.argv[1:])
