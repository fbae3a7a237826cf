# Sourced by ./fleet and .ci/run: sets JAVA_HOME to a JDK >= 21 and puts it first on PATH.
# Order: JAVA_HOME when it is >= 21, else the newest JDK under /usr/lib/jvm.

fleet_java_major() {
  # Prints the feature version of the JDK at $1 (e.g. 17, 21, 25), or nothing.
  local release="$1/release"
  [ -x "$1/bin/java" ] && [ -x "$1/bin/javac" ] || return 0
  if [ -f "$release" ]; then
    sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$release"
  else
    "$1/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1
  fi
}

fleet_find_jdk() {
  local major
  if [ -n "${JAVA_HOME:-}" ]; then
    major=$(fleet_java_major "$JAVA_HOME")
    if [ -n "$major" ] && [ "$major" -ge 21 ]; then
      export PATH="$JAVA_HOME/bin:$PATH"
      return 0
    fi
  fi
  local best="" best_major=0 dir
  for dir in /usr/lib/jvm/*; do
    [ -d "$dir" ] || continue
    major=$(fleet_java_major "$dir")
    if [ -n "$major" ] && [ "$major" -ge 21 ] && [ "$major" -gt "$best_major" ]; then
      best="$dir"
      best_major="$major"
    fi
  done
  if [ -z "$best" ]; then
    echo "rollout-fleet needs a JDK 21 or newer, and found none: JAVA_HOME is '${JAVA_HOME:-unset}' and /usr/lib/jvm has no JDK >= 21." >&2
    echo "Install one (e.g. Temurin 21 or 25) and point JAVA_HOME at it." >&2
    return 1
  fi
  export JAVA_HOME="$best"
  export PATH="$JAVA_HOME/bin:$PATH"
}
