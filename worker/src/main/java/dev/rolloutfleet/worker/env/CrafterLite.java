package dev.rolloutfleet.worker.env;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rolloutfleet.common.wire.Json;
import dev.rolloutfleet.common.wire.RolloutRequest;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * A small, deterministic (per seed) take on Crafter: a 32×32 world of grass, sand, water, lava,
 * trees, stone, coal, iron and diamonds, with cows to eat and zombies and skeletons to fight.
 * Crafter's 17 actions and 22 achievements, its inventory and vitals (health, food, drink,
 * energy), achievement counts, and a text rendering of the 9×7 view for prompts. Tool
 * {@code interact} takes a list of 1–5 actions. Simplified: creatures stand still and hurt a
 * neighbouring player every 5 steps; swords make fights shorter; plants ripen after 10 steps.
 */
public final class CrafterLite implements Environment {

    public static final String NAME = "crafter-lite";

    static final List<String> ACTIONS = List.of("noop", "move_left", "move_right", "move_up", "move_down", "do", "sleep",
            "place_stone", "place_table", "place_furnace", "place_plant", "make_wood_pickaxe", "make_stone_pickaxe",
            "make_iron_pickaxe", "make_wood_sword", "make_stone_sword", "make_iron_sword");
    static final List<String> ACHIEVEMENTS = List.of("collect_coal", "collect_diamond", "collect_drink", "collect_iron",
            "collect_sapling", "collect_stone", "collect_wood", "defeat_skeleton", "defeat_zombie", "eat_cow", "eat_plant",
            "make_iron_pickaxe", "make_iron_sword", "make_stone_pickaxe", "make_stone_sword", "make_wood_pickaxe",
            "make_wood_sword", "place_furnace", "place_plant", "place_stone", "place_table", "wake_up");
    private static final List<String> ITEMS = List.of("health", "food", "drink", "energy", "sapling", "wood", "stone", "coal",
            "iron", "diamond", "wood_pickaxe", "stone_pickaxe", "iron_pickaxe", "wood_sword", "stone_sword", "iron_sword");
    private static final int SIZE = 32;
    private static final int MAX_STEPS = 10_000;

    private final long seed;
    private char[][] world;
    private int[][] plantAge;
    /** Damage taken by the creature on each tile: zombies and skeletons fall at 2 (a sword hits harder). */
    private int[][] creatureHits;
    private int x;
    private int y;
    private int faceX;
    private int faceY;
    private int steps;
    private boolean sleeping;
    private SplittableRandom random;
    private final Map<String, Integer> inventory = new LinkedHashMap<>();
    private final Map<String, Integer> counts = new LinkedHashMap<>();

    CrafterLite(long seed) {
        this.seed = seed;
    }

    @Override
    public ObjectNode reset() {
        random = new SplittableRandom(seed);
        world = new char[SIZE][SIZE];
        plantAge = new int[SIZE][SIZE];
        creatureHits = new int[SIZE][SIZE];
        for (int i = 0; i < SIZE; i++) {
            for (int j = 0; j < SIZE; j++) {
                double r = random.nextDouble();
                world[i][j] = r < 0.08 ? 'w' : r < 0.22 ? 'T' : r < 0.32 ? 's' : r < 0.36 ? 'c' : r < 0.385 ? 'i'
                        : r < 0.39 ? 'd' : r < 0.45 ? 'S' : r < 0.47 ? 'C' : r < 0.475 ? 'l' : r < 0.485 ? 'Z'
                        : r < 0.49 ? 'K' : '.';
            }
        }
        x = SIZE / 2;
        y = SIZE / 2;
        for (int dy = -1; dy <= 1; dy++) {
            for (int dx = -1; dx <= 1; dx++) {
                world[y + dy][x + dx] = world[y + dy][x + dx] == 'l' || world[y + dy][x + dx] == 'Z'
                        || world[y + dy][x + dx] == 'K' ? '.' : world[y + dy][x + dx];
            }
        }
        world[y][x] = '.';
        faceX = 0;
        faceY = 1;
        steps = 0;
        sleeping = false;
        inventory.clear();
        ITEMS.forEach(item -> inventory.put(item, 0));
        List.of("health", "food", "drink", "energy").forEach(v -> inventory.put(v, 9));
        counts.clear();
        ACHIEVEMENTS.forEach(a -> counts.put(a, 0));
        return observation();
    }

    @Override
    public EnvStep step(List<ToolCall> toolCalls) throws EnvironmentException {
        ToolCall call = toolCalls.get(0);
        if (!"interact".equals(call.tool())) {
            throw new EnvironmentException("crafter-lite has one tool, \"interact\"; got \"" + call.tool() + "\"");
        }
        JsonNode actions = call.args().get("actions");
        if (actions == null || !actions.isArray() || actions.isEmpty()) {
            throw new EnvironmentException("interact.actions must be a non-empty list of actions");
        }
        int before = unlocked();
        int applied = 0;
        for (JsonNode action : actions) {
            if (!ACTIONS.contains(action.asText())) {
                throw new EnvironmentException("unknown action \"" + action.asText() + "\"; actions are " + ACTIONS);
            }
            act(action.asText());
            applied++;
            if (inventory.get("health") <= 0) {
                break;
            }
        }
        boolean dead = inventory.get("health") <= 0;
        boolean truncated = steps >= MAX_STEPS;
        double reward = unlocked() - before;
        return new EnvStep(observation(), reward, dead || truncated, truncated && !dead,
                Json.object().put("actions_applied", applied).put("steps", steps));
    }

    private void act(String action) {
        steps++;
        if (sleeping) {
            action = "noop";
            inventory.merge("energy", 1, Integer::sum);
            if (inventory.get("energy") >= 9) {
                inventory.put("energy", 9);
                sleeping = false;
                achieve("wake_up");
            }
        }
        int tx = x + faceX;
        int ty = y + faceY;
        char facing = inside(tx, ty) ? world[ty][tx] : '#';
        switch (action) {
            case "move_left" -> move(-1, 0);
            case "move_right" -> move(1, 0);
            case "move_up" -> move(0, -1);
            case "move_down" -> move(0, 1);
            case "sleep" -> sleeping = inventory.get("energy") < 9;
            case "do" -> collect(tx, ty, facing);
            case "place_stone" -> place(tx, ty, facing, "stone", 1, "wgs.", 'S', "place_stone");
            case "place_table" -> place(tx, ty, facing, "wood", 1, ".s", 't', "place_table");
            case "place_furnace" -> {
                if (near('t')) {
                    place(tx, ty, facing, "stone", 1, ".s", 'f', "place_furnace");
                }
            }
            case "place_plant" -> {
                if (facing == '.' && take("sapling", 1)) {
                    world[ty][tx] = 'p';
                    plantAge[ty][tx] = 0;
                    achieve("place_plant");
                }
            }
            case "make_wood_pickaxe" -> make("wood_pickaxe", false, Map.of("wood", 1));
            case "make_stone_pickaxe" -> make("stone_pickaxe", false, Map.of("wood", 1, "stone", 1));
            case "make_iron_pickaxe" -> make("iron_pickaxe", true, Map.of("wood", 1, "coal", 1, "iron", 1));
            case "make_wood_sword" -> make("wood_sword", false, Map.of("wood", 1));
            case "make_stone_sword" -> make("stone_sword", false, Map.of("wood", 1, "stone", 1));
            case "make_iron_sword" -> make("iron_sword", true, Map.of("wood", 1, "coal", 1, "iron", 1));
            default -> { }
        }
        vitals();
    }

    private void move(int dx, int dy) {
        faceX = dx;
        faceY = dy;
        int nx = x + dx;
        int ny = y + dy;
        if (inside(nx, ny) && (world[ny][nx] == '.' || world[ny][nx] == 's' || world[ny][nx] == 'l')) {
            x = nx;
            y = ny;
            if (world[ny][nx] == 'l') {
                inventory.put("health", 0);
            }
        }
    }

    private void collect(int tx, int ty, char facing) {
        switch (facing) {
            case 'T' -> gain("wood", "collect_wood");
            case 'S' -> mine(tx, ty, "wood_pickaxe", "stone", "collect_stone");
            case 'c' -> mine(tx, ty, "wood_pickaxe", "coal", "collect_coal");
            case 'i' -> mine(tx, ty, "stone_pickaxe", "iron", "collect_iron");
            case 'd' -> mine(tx, ty, "iron_pickaxe", "diamond", "collect_diamond");
            case 'w' -> {
                inventory.put("drink", Math.min(9, inventory.get("drink") + 1));
                achieve("collect_drink");
            }
            case '.' -> {
                if (random.nextDouble() < 0.1) {
                    gain("sapling", "collect_sapling");
                }
            }
            case 'Z' -> fight(tx, ty, 2, "defeat_zombie");
            case 'K' -> fight(tx, ty, 2, "defeat_skeleton");
            case 'C' -> {
                world[ty][tx] = '.';
                inventory.put("food", Math.min(9, inventory.get("food") + 6));
                achieve("eat_cow");
            }
            case 'p' -> {
                if (plantAge[ty][tx] >= 10) {
                    world[ty][tx] = '.';
                    inventory.put("food", Math.min(9, inventory.get("food") + 4));
                    achieve("eat_plant");
                }
            }
            default -> { }
        }
    }

    private void fight(int tx, int ty, int toughness, String achievement) {
        int damage = 1 + (inventory.get("wood_sword") > 0 ? 1 : 0) + (inventory.get("stone_sword") > 0 ? 1 : 0)
                + (inventory.get("iron_sword") > 0 ? 2 : 0);
        creatureHits[ty][tx] += damage;
        if (creatureHits[ty][tx] >= toughness) {
            world[ty][tx] = '.';
            creatureHits[ty][tx] = 0;
            achieve(achievement);
        }
    }

    private void mine(int tx, int ty, String tool, String item, String achievement) {
        if (inventory.get(tool) > 0) {
            world[ty][tx] = '.';
            gain(item, achievement);
        }
    }

    private void place(int tx, int ty, char facing, String item, int cost, String onto, char tile, String achievement) {
        if (onto.indexOf(facing) >= 0 && take(item, cost)) {
            world[ty][tx] = tile;
            achieve(achievement);
        }
    }

    private void make(String tool, boolean needsFurnace, Map<String, Integer> cost) {
        if (!near('t') || (needsFurnace && !near('f'))) {
            return;
        }
        if (cost.entrySet().stream().allMatch(e -> inventory.get(e.getKey()) >= e.getValue())) {
            cost.forEach((item, n) -> inventory.merge(item, -n, Integer::sum));
            gain(tool, "make_" + tool);
        }
    }

    private void vitals() {
        if (steps % 25 == 0) {
            inventory.merge("food", -1, Integer::sum);
        }
        if (steps % 20 == 0) {
            inventory.merge("drink", -1, Integer::sum);
        }
        if (!sleeping && steps % 30 == 0) {
            inventory.merge("energy", -1, Integer::sum);
        }
        List.of("food", "drink", "energy").forEach(v -> inventory.put(v, Math.max(0, inventory.get(v))));
        // A zombie or skeleton next to the player hurts it every 5 steps (less while it is awake and armed).
        if (steps % 5 == 0 && (near('Z') || near('K'))) {
            inventory.put("health", Math.max(0, inventory.get("health") - (sleeping ? 2 : 1)));
        }
        boolean starving = inventory.get("food") == 0 || inventory.get("drink") == 0 || inventory.get("energy") == 0;
        if (steps % 10 == 0) {
            inventory.put("health", Math.max(0, Math.min(9, inventory.get("health") + (starving ? -1 : 1))));
        }
        for (int i = 0; i < SIZE; i++) {
            for (int j = 0; j < SIZE; j++) {
                if (world[i][j] == 'p') {
                    plantAge[i][j]++;
                }
            }
        }
    }

    private void gain(String item, String achievement) {
        inventory.merge(item, 1, Integer::sum);
        achieve(achievement);
    }

    private boolean take(String item, int n) {
        if (inventory.get(item) < n) {
            return false;
        }
        inventory.merge(item, -n, Integer::sum);
        return true;
    }

    private void achieve(String achievement) {
        counts.merge(achievement, 1, Integer::sum);
    }

    private boolean near(char tile) {
        for (int dy = -1; dy <= 1; dy++) {
            for (int dx = -1; dx <= 1; dx++) {
                if (inside(x + dx, y + dy) && world[y + dy][x + dx] == tile) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean inside(int px, int py) {
        return px >= 0 && py >= 0 && px < SIZE && py < SIZE;
    }

    private int unlocked() {
        return (int) counts.values().stream().filter(n -> n > 0).count();
    }

    private ObjectNode observation() {
        ObjectNode obs = Json.object();
        ObjectNode status = obs.putObject("achievements_status");
        counts.forEach((a, n) -> status.put(a, n > 0));
        obs.set("achievements_counts", Json.tree(counts));
        obs.set("inventory", Json.tree(inventory));
        obs.put("health", inventory.get("health")).put("food", inventory.get("food")).put("drink", inventory.get("drink"))
                .put("energy", inventory.get("energy"));
        obs.putArray("player_position").add(x).add(y);
        obs.putArray("facing").add(faceX).add(faceY);
        obs.put("sleeping", sleeping).put("steps", steps);
        obs.put("text", render());
        return obs;
    }

    /** The 9×7 view around the player, a legend, vitals and inventory: what an LLM policy reads. */
    private String render() {
        StringBuilder out = new StringBuilder("View (you are @):\n");
        for (int dy = -3; dy <= 3; dy++) {
            for (int dx = -4; dx <= 4; dx++) {
                int px = x + dx;
                int py = y + dy;
                out.append(dx == 0 && dy == 0 ? '@' : inside(px, py) ? world[py][px] : '#');
            }
            out.append('\n');
        }
        out.append("Legend: . grass, s sand, w water, T tree, S stone, c coal, i iron, d diamond, l lava, C cow,"
                + " Z zombie, K skeleton, p plant, t table, f furnace, # edge\n");
        out.append("Facing: ").append(faceX).append(',').append(faceY).append('\n');
        out.append("Vitals: health ").append(inventory.get("health")).append(", food ").append(inventory.get("food"))
                .append(", drink ").append(inventory.get("drink")).append(", energy ").append(inventory.get("energy")).append('\n');
        out.append("Inventory:");
        inventory.forEach((item, n) -> {
            if (n > 0 && !List.of("health", "food", "drink", "energy").contains(item)) {
                out.append(' ').append(item).append('=').append(n);
            }
        });
        out.append("\nCall interact with a list of actions.");
        return out.toString();
    }

    @Override
    public List<ObjectNode> tools() {
        ObjectNode items = Json.object().put("type", "string");
        ArrayNode names = items.putArray("enum");
        ACTIONS.forEach(names::add);
        ObjectNode actions = Json.object().put("type", "array").put("minItems", 1).put("maxItems", 5);
        actions.set("items", items);
        return List.of(ToolSchemas.function("interact", "Take 1 to 5 actions in order.", "actions", actions));
    }

    /** Makes crafter-lite worlds. */
    public static final class Factory implements EnvironmentFactory {
        @Override
        public String name() {
            return NAME;
        }

        @Override
        public Environment create(RolloutRequest.EnvSpec spec, long seed) {
            return new CrafterLite(seed);
        }
    }
}
