#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests, on a free 127.0.0.1 port, in a temporary
# folder, as a normal user (the server refuses root: as root it runs as `postgres`).
#
#   scripts/pg-cluster.sh start [--owner-pid PID] [--ssl] [--durable]
#                                                   prints "DIR URL" on one line; URL is
#                                                   postgresql://rolo@127.0.0.1:PORT/postgres
#                                                   (superuser rolo, trust authentication);
#                                                   --ssl: TLS on, with a self-signed
#                                                   certificate for 127.0.0.1 in DIR/server.crt;
#                                                   --durable: fsync, synchronous commit and
#                                                   full page writes on, as in production (the
#                                                   benchmarks, to match SQLite's synchronous=FULL)
#   scripts/pg-cluster.sh stop DIR                  stops it and removes DIR
#   scripts/pg-cluster.sh halt DIR                  stops the server, keeps the data (an outage)
#   scripts/pg-cluster.sh resume DIR                starts it again on the same port
#   scripts/pg-cluster.sh replica DIR [--owner-pid PID]
#                                                   a streaming replica of the running cluster
#                                                   DIR (pg_basebackup -R), in a new folder on a
#                                                   free port; prints "DIR2 URL2"
#   scripts/pg-cluster.sh take-over OLD NEW         promotes the replica NEW and moves it to
#                                                   OLD's port (OLD must be stopped): the address
#                                                   clients know now leads to the new primary, as
#                                                   when a virtual IP or DNS name moves in a failover
#
# With --owner-pid the cluster stops by itself within a second of that process's end, even
# if it crashed. Durability is off (fsync, full pages) unless --durable: the data dies with the
# folder anyway, and the tests want speed, not crash safety of the cluster itself.
set -euo pipefail

# Only stdin, stdout and stderr go on to the server: a descriptor the caller left open (a
# test process's pipes to its other children) would otherwise live as long as the server,
# and whoever reads that pipe would wait for the server's end.
for fd in /proc/$$/fd/*; do
    fd=${fd##*/}
    case $fd in 0|1|2|255) ;; *) eval "exec $fd>&-" 2>/dev/null || true ;; esac
done

bin_dir() {
    local dir
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -z "$dir" ] || [ ! -x "$dir/initdb" ]; then
        echo "pg-cluster: no PostgreSQL server in /usr/lib/postgresql/*/bin (scripts/install-deps.sh --test installs it)" >&2
        exit 1
    fi
    echo "$dir"
}

# Runs a server binary as the user that owns the cluster.
as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

stop_cluster() {
    local dir=$1 bin
    bin=$(bin_dir)
    if [ -f "$dir/data/postmaster.pid" ]; then
        as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || \
            as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
}

# start_on_free_port DIR SETTINGS WHAT: starts the cluster in DIR on a free port (a port
# free a moment ago may be taken: five tries), writes DIR/port and sets $port; on failure
# prints the log, removes DIR and exits.
start_on_free_port() {
    local dir=$1 settings=$2 what=$3 bin
    bin=$(bin_dir)
    for _ in 1 2 3 4 5; do
        port=$(free_port)
        if as_owner "$bin/pg_ctl" -D "$dir/data" -w -t 60 -l "$dir/server.log" -o "-p $port -k $dir $settings" \
            start >/dev/null 2>&1; then
            printf '%s\n' "$port" >"$dir/port"
            return
        fi
    done
    cat "$dir/server.log" >&2 || true
    rm -rf "$dir"
    echo "pg-cluster: $what did not start" >&2
    exit 1
}

# announce DIR OWNER_PID: the watcher that stops DIR after OWNER_PID's end, then "DIR URL".
announce() {
    local dir=$1 owner_pid=$2
    if [ -n "$owner_pid" ]; then
        # Detached from the caller's terminal, process group and pipes.
        setsid bash "$0" watch "$owner_pid" "$dir" </dev/null >/dev/null 2>&1 &
    fi
    echo "$dir postgresql://rolo@127.0.0.1:$(cat "$dir/port")/postgres"
}

start_cluster() {
    local owner_pid="" ssl="" durable="" bin dir port settings
    while [ $# -gt 0 ]; do
        case $1 in
            --owner-pid) owner_pid=$2; shift 2 ;;
            --ssl) ssl=yes; shift ;;
            --durable) durable=yes; shift ;;
            *) echo "pg-cluster: unknown option $1" >&2; exit 2 ;;
        esac
    done
    bin=$(bin_dir)
    dir=$(mktemp -d "${TMPDIR:-/tmp}/rolo-pg.XXXXXX")
    chmod 700 "$dir"
    if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; fi
    if ! as_owner "$bin/initdb" -D "$dir/data" -U rolo --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1; then
        cat "$dir/initdb.log" >&2
        rm -rf "$dir"
        exit 1
    fi
    settings="-c listen_addresses=127.0.0.1 -c max_connections=500"
    [ -n "$durable" ] || settings="$settings -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    if [ -n "$ssl" ]; then
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
            -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
            -keyout "$dir/server.key" -out "$dir/server.crt" >/dev/null 2>&1
        chmod 600 "$dir/server.key"
        if [ "$(id -u)" = 0 ]; then chown postgres: "$dir/server.key" "$dir/server.crt"; fi
        settings="$settings -c ssl=on -c ssl_cert_file=$dir/server.crt -c ssl_key_file=$dir/server.key"
    fi
    start_on_free_port "$dir" "$settings" "the server"
    printf '%s\n' "$settings" >"$dir/settings"
    announce "$dir" "$owner_pid"
}

replica_cluster() {
    local primary=$1 owner_pid="" bin dir port
    [ "${2:-}" = "--owner-pid" ] && owner_pid=$3
    bin=$(bin_dir)
    dir=$(mktemp -d "${TMPDIR:-/tmp}/rolo-pg.XXXXXX")
    chmod 700 "$dir"
    if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; fi
    # initdb's pg_hba.conf trusts replication connections from 127.0.0.1.
    if ! as_owner "$bin/pg_basebackup" -h 127.0.0.1 -p "$(cat "$primary/port")" -U rolo -D "$dir/data" -R -X stream \
            >"$dir/basebackup.log" 2>&1; then
        cat "$dir/basebackup.log" >&2
        rm -rf "$dir"
        exit 1
    fi
    cp "$primary/settings" "$dir/settings"
    start_on_free_port "$dir" "$(cat "$dir/settings")" "the replica"
    announce "$dir" "$owner_pid"
}

# Promoted first, on its own port (a standby restarted on the old primary's port would
# try to stream from itself), then moved.
take_over() {
    local old=$1 new=$2 bin
    bin=$(bin_dir)
    as_owner "$bin/pg_ctl" -D "$new/data" -w -t 60 promote >/dev/null
    as_owner "$bin/pg_ctl" -D "$new/data" -m fast -w stop >/dev/null
    cp "$old/port" "$new/port"
    resume_cluster "$new"
}

halt_cluster() {
    local dir=$1
    as_owner "$(bin_dir)/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
}

resume_cluster() {
    local dir=$1
    as_owner "$(bin_dir)/pg_ctl" -D "$dir/data" -w -t 60 -l "$dir/server.log" \
        -o "-p $(cat "$dir/port") -k $dir $(cat "$dir/settings")" start >/dev/null
}

case "${1:-}" in
    start) shift; start_cluster "$@" ;;
    stop) stop_cluster "$2" ;;
    halt) halt_cluster "$2" ;;
    resume) resume_cluster "$2" ;;
    replica) shift; replica_cluster "$@" ;;
    take-over) take_over "$2" "$3" ;;
    watch)
        while kill -0 "$2" 2>/dev/null; do sleep 1; done
        stop_cluster "$3"
        ;;
    *) echo "usage: $0 start [--owner-pid PID] [--ssl] [--durable] | stop DIR | halt DIR | resume DIR | replica DIR [--owner-pid PID] | take-over OLD NEW" >&2; exit 2 ;;
esac
