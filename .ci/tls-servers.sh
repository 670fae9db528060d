#!/usr/bin/env bash
# Test servers with TLS from a test CA, for tests/connect_tls.rs. Idempotent and quick: a
# second run finds everything in place and only checks it answers.
#
#   CA and certificates  $EAVPIVOT_TLS_DIR (default /tmp/eavpivot-tls): ca.pem, server.pem
#                        (CN localhost, SAN localhost and 127.0.0.1), client.pem/client.key.
#                        Generated here, never committed: they are test-only and short-lived.
#   PostgreSQL           127.0.0.1:5442, its own cluster in $DIR/pg, ssl = on with server.pem,
#                        trust authentication (as the main test cluster).
#   MariaDB              127.0.0.1:3316, its own datadir in $DIR/mariadb, TLS with server.pem,
#                        root without password (as the main test server).
#
# The main PostgreSQL cluster (5432) keeps Debian's snakeoil certificate, which the test CA
# does not sign: that is the "untrusted certificate" case.
set -euo pipefail

DIR="${EAVPIVOT_TLS_DIR:-/tmp/eavpivot-tls}"
PG_PORT=5442
MY_PORT=3316
mkdir -p "$DIR"
chmod 755 "$DIR"
cd "$DIR"

if [ ! -s ca.pem ] || [ ! -s server.pem ] || [ ! -s client.pem ]; then
  echo "tls-servers: generating a test CA and certificates in $DIR"
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=eavpivot test CA" \
    -keyout ca.key -out ca.pem 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
    -keyout server.key -out server.csr 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' > server.ext
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 \
    -extfile server.ext -out server.pem 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=postgres" \
    -keyout client.key -out client.csr 2>/dev/null
  printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n' > client.ext
  openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 \
    -extfile client.ext -out client.pem 2>/dev/null
  chmod 644 ca.pem server.pem client.pem
  chmod 600 ca.key server.key client.key
  rm -f ./*.csr ./*.ext
fi

# Each server reads its own copy of the key: the servers insist on owning it, mode 0600.
install_key() { # user dest
  install -o "$1" -m 600 server.key "$2"
}

start_postgres() {
  local bin
  bin="/usr/lib/postgresql/$(ls /etc/postgresql | sort -V | tail -1)/bin"
  if pg_isready -h 127.0.0.1 -p "$PG_PORT" -q 2>/dev/null; then
    return 0
  fi
  if [ ! -s pg/PG_VERSION ]; then
    echo "tls-servers: creating the PostgreSQL TLS cluster on $PG_PORT"
    rm -rf pg && mkdir pg && chown postgres pg
    runuser -u postgres -- "$bin/initdb" -D "$DIR/pg" -U postgres --auth=trust >/dev/null
    cat >> pg/postgresql.conf <<EOF
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$DIR/pg'
ssl = on
ssl_cert_file = 'server.crt'
ssl_key_file = 'server.key'
EOF
  fi
  # Copied at every start, so certificates generated anew are the ones served.
  install_key postgres pg/server.key
  install -o postgres -m 644 server.pem pg/server.crt
  # A cluster ended with -9 (the session before CI ends what it left running) leaves its pid
  # file behind, and pg_ctl then refuses to start: remove it once no postgres process holds it
  # (the old backends exit on their own when their postmaster dies; wait for that).
  if [ -f pg/postmaster.pid ]; then
    local old
    old="$(head -1 pg/postmaster.pid)"
    for _ in $(seq 1 20); do
      ps -p "$old" -o comm= 2>/dev/null | grep -q postgres || break
      sleep 0.5
    done
    if ! ps -p "$old" -o comm= 2>/dev/null | grep -q postgres; then
      for _ in $(seq 1 20); do
        pgrep -f -- "-D $DIR/pg" >/dev/null || pgrep -u postgres -f "postgres: .*5442" >/dev/null || break
        sleep 0.5
      done
      rm -f pg/postmaster.pid
    fi
  fi
  runuser -u postgres -- "$bin/pg_ctl" -D "$DIR/pg" -l "$DIR/pg/log" -w start >/dev/null
  runuser -u postgres -- psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc \
    "SELECT 1 FROM pg_database WHERE datname = 'test'" -At | grep -q 1 ||
    runuser -u postgres -- createdb -h 127.0.0.1 -p "$PG_PORT" -U postgres test
}

start_mariadb() {
  if mariadb-admin -h 127.0.0.1 -P "$MY_PORT" -uroot ping >/dev/null 2>&1; then
    return 0
  fi
  if [ ! -d mariadb/mysql ]; then
    echo "tls-servers: creating the MariaDB TLS instance on $MY_PORT"
    rm -rf mariadb && mkdir mariadb && chown mysql mariadb
    mariadb-install-db --no-defaults --user=mysql --datadir="$DIR/mariadb" \
      --auth-root-authentication-method=normal --skip-test-db >/dev/null
  fi
  install_key mysql "$DIR/mariadb-server.key"
  setsid /usr/sbin/mariadbd --no-defaults --user=mysql --datadir="$DIR/mariadb" \
    --port="$MY_PORT" --bind-address=127.0.0.1 --socket="$DIR/mariadb/mariadb.sock" \
    --pid-file="$DIR/mariadb/mariadb.pid" --log-error="$DIR/mariadb/error.log" --skip-name-resolve \
    --ssl-ca="$DIR/ca.pem" --ssl-cert="$DIR/server.pem" --ssl-key="$DIR/mariadb-server.key" \
    >/dev/null 2>&1 &
  for _ in $(seq 1 60); do
    if mariadb-admin -h 127.0.0.1 -P "$MY_PORT" -uroot ping >/dev/null 2>&1; then
      mariadb -h 127.0.0.1 -P "$MY_PORT" -uroot -e "CREATE DATABASE IF NOT EXISTS test"
      return 0
    fi
    sleep 0.5
  done
  echo "tls-servers: MariaDB on $MY_PORT did not come up; see $DIR/mariadb/error.log" >&2
  return 1
}

start_postgres
start_mariadb
echo "tls-servers: PostgreSQL 127.0.0.1:$PG_PORT and MariaDB 127.0.0.1:$MY_PORT up with TLS (CA $DIR/ca.pem)"
