# One image for every fleet role (worker, collector, sim-llm, topics, submit, ...): the fleet CLI.
# Build from the repository root: docker build -t rollout-fleet .
FROM maven:3.9-eclipse-temurin-21 AS build
WORKDIR /src
COPY pom.xml ./
COPY common/pom.xml common/
COPY worker/pom.xml worker/
COPY collector/pom.xml collector/
COPY ops/pom.xml ops/
COPY common/src common/src
COPY worker/src worker/src
COPY collector/src collector/src
COPY ops/src ops/src
RUN mvn -B -q -DskipTests package

FROM eclipse-temurin:21-jre
RUN useradd --system --uid 10001 --home-dir /app fleet && mkdir -p /data && chown fleet /data
WORKDIR /app
COPY --from=build /src/ops/target/fleet-ops.jar /app/fleet-ops.jar
COPY --from=build /src/ops/target/lib /app/lib
USER fleet
EXPOSE 9400
ENTRYPOINT ["java", "--enable-native-access=ALL-UNNAMED", "-cp", "/app/fleet-ops.jar:/app/lib/*", "dev.rolloutfleet.ops.FleetCommand"]
CMD ["--help"]
