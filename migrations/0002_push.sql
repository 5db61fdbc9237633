CREATE TABLE `push_actions` (
	`jti` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`used_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `push_actions_expires` ON `push_actions` (`expires_at`);--> statement-breakpoint
CREATE TABLE `push_deliveries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` text NOT NULL,
	`subscription_id` text NOT NULL,
	`host_id` text NOT NULL,
	`chat_id` text NOT NULL,
	`kind` text NOT NULL,
	`turn_key` text NOT NULL,
	`buzz` integer NOT NULL,
	`status` integer,
	`error` text,
	`removed` integer DEFAULT false NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `push_deliveries_user` ON `push_deliveries` (`user_id`,`id`);--> statement-breakpoint
CREATE INDEX `push_deliveries_at` ON `push_deliveries` (`at`);--> statement-breakpoint
CREATE TABLE `push_subscriptions` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`session_id` text NOT NULL,
	`endpoint` text NOT NULL,
	`p256dh` text NOT NULL,
	`auth` text NOT NULL,
	`vapid_key` text NOT NULL,
	`user_agent` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `push_subscriptions_endpoint_unique` ON `push_subscriptions` (`endpoint`);--> statement-breakpoint
CREATE INDEX `push_subscriptions_user` ON `push_subscriptions` (`user_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `push_turns` (
	`host_id` text NOT NULL,
	`chat_id` text NOT NULL,
	`turn_key` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`host_id`, `chat_id`, `turn_key`)
);
--> statement-breakpoint
CREATE INDEX `push_turns_created` ON `push_turns` (`created_at`);